package ui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/theme"
)

// Tone says how a cell should be coloured; the styles decide what that looks like.
type Tone int

const (
	toneNormal Tone = iota
	toneMuted
	toneGood
	toneWarn
	toneBad
)

// Column describes one column of a pane's table.
type Column struct {
	Title string
	Max   int  // widest the column may grow
	Min   int  // a flexible column shrinks no further than this before the others shrink
	Flex  bool // shrinks first when the terminal is narrow
	// Drop > 0 lets the column give way when the terminal cannot show every column whole: columns are
	// hidden highest Drop first, before any other column is cut (the details view still shows the value).
	Drop int
	// Reserve is the width the column takes however narrow its cells are now: a status that grows (a
	// cordon, a reboot) then pushes no other column aside.
	Reserve int
}

// Row is one line of a pane: plain cell text plus what the renderer needs to style it.
type Row struct {
	Key    string   // identity of the object, used to keep the selection across snapshots
	Parent string   // Key of the row this one is nested under ("" for top-level rows)
	Span   bool     // a nested row whose single cell spans the whole width
	Cells  []string // plain text, never styled: filtering and width computation read it
	Tones  []Tone   // per cell; missing entries are toneNormal
	// query is the filter this row matched ("" when unfiltered); matches says which characters, for the
	// renderer to highlight.
	query  string
	search string
	// ageCell is 1 + the index of the cell that shows how old born is (0: none), so a tick can renew it
	// without rebuilding the row.
	ageCell int
	born    time.Time
}

// searchText is what the filter matches against: the cells joined by a space, up to the age cell (the
// age changes under the user, and the metric cells follow it).
func (r *Row) searchText() string {
	if r.search == "" {
		cells := r.Cells
		if r.ageCell > 0 && r.ageCell <= len(cells) {
			cells = cells[:r.ageCell-1]
		}
		r.search = strings.Join(cells, " ")
	}
	return r.search
}

func (r Row) tone(i int) Tone {
	if i < len(r.Tones) {
		return r.Tones[i]
	}
	return toneNormal
}

// Marks are the glyphs rows and tables use (the theme's).
type Marks = theme.Marks

// rowEnv is what row builders need besides the snapshot.
type rowEnv struct {
	Now     time.Time
	Marks   Marks
	Metrics *metricsView // the nodes' figures; nil when the console reads none
}

// nodeColumns give way (Drop) before the metric columns do: on a narrow terminal which node is sick
// matters more than its build or address (the details view still shows them).
var nodeColumns = []Column{
	{Title: "NAME", Max: 48, Min: 24, Flex: true},
	{Title: "STATUS", Max: 34, Reserve: len("NotReady,SchedulingDisabled")}, // a cordoned node rebooting
	{Title: "OS", Max: 7},
	{Title: "BUILD", Max: 16, Drop: 7},
	{Title: "ROLES", Max: 30, Min: 6, Flex: true, Drop: 8},
	{Title: "WMCO", Max: 22},
	{Title: "BYOH", Max: 4, Drop: 6},
	{Title: "INTERNAL-IP", Max: 39, Drop: 9},
	{Title: "AGE", Max: 8},
}

// nodeRows turns the snapshot's nodes into rows, Windows nodes first as the snapshot orders them.
func nodeRows(snap *model.Snapshot, env rowEnv, windowsOnly bool) []Row {
	if snap == nil {
		return nil
	}
	rows := make([]Row, 0, len(snap.Nodes))
	for i := range snap.Nodes {
		n := &snap.Nodes[i]
		if windowsOnly && !n.Windows {
			continue
		}
		r := nodeRow(n, env)
		if env.Metrics != nil {
			addMetricCells(&r, n.Name, env)
		}
		rows = append(rows, r)
	}
	return rows
}

func nodeRow(n *model.NodeInfo, env rowEnv) Row {
	status, statusTone := nodeStatus(n)
	osName, build := "Linux", ""
	if n.Windows {
		osName, build = "Windows", n.WindowsBuild
	}
	version, versionTone := n.WMCOVersion, toneNormal
	if n.VersionDrift { // the mark first, so a narrow column cuts the version, not the mark
		version, versionTone = strings.TrimSpace(env.Marks.Warn+" "+version), toneWarn
	}
	byoh := ""
	if n.BYOH {
		byoh = "yes"
	}
	return Row{
		Key:     n.Name,
		Cells:   []string{n.Name, status, osName, build, nodeRoles(n.Roles), version, byoh, n.InternalIP, formatAge(env.Now, n.Created)},
		Tones:   []Tone{toneNormal, statusTone, toneNormal, toneMuted, toneNormal, versionTone, toneNormal, toneNormal, toneMuted},
		ageCell: 9, born: n.Created,
	}
}

func nodeStatus(n *model.NodeInfo) (string, Tone) {
	status := n.Status.Word()
	tone := toneGood
	if n.Status != model.NodeReady {
		tone = toneBad
	}
	if n.Unschedulable {
		status += ",SchedulingDisabled"
		if tone == toneGood {
			tone = toneWarn
		}
	}
	return status, tone
}

func nodeRoles(roles []string) string {
	if len(roles) == 0 {
		return "<none>"
	}
	sorted := append([]string(nil), roles...)
	sort.Strings(sorted)
	return strings.Join(sorted, ",")
}

var machineSetColumns = []Column{
	{Title: "NAME", Max: 56, Min: 24, Flex: true},
	{Title: "DESIRED", Max: 7},
	{Title: "CURRENT", Max: 7, Drop: 1},
	{Title: "READY", Max: 5},
	{Title: "AVAILABLE", Max: 9},
	{Title: "OS", Max: 7},
	{Title: "PLATFORM", Max: 16, Drop: 2},
	{Title: "AGE", Max: 8},
}

// machineSetKey identifies a MachineSet row; expansion is remembered by it.
func machineSetKey(ms *model.MachineSetInfo) string { return ms.Namespace + "/" + ms.Name }

// machineSetRows lists MachineSets (the Windows ones only with w); an expanded one is followed by one
// nested row per Machine.
func machineSetRows(snap *model.Snapshot, env rowEnv, expanded map[string]bool, windowsOnly bool) []Row {
	if snap == nil {
		return nil
	}
	var rows []Row
	for i := range snap.MachineSets {
		ms := &snap.MachineSets[i]
		if windowsOnly && !ms.Windows {
			continue
		}
		rows = append(rows, machineSetRow(ms, env))
		if expanded[machineSetKey(ms)] {
			rows = append(rows, machineRows(ms, env)...)
		}
	}
	return rows
}

func machineSetRow(ms *model.MachineSetInfo, env rowEnv) Row {
	osName := "Linux"
	if ms.Windows {
		osName = "Windows"
	}
	readyTone := toneGood
	if ms.Ready < ms.Desired {
		readyTone = toneWarn
	}
	count := func(v int32) string { return fmt.Sprint(v) }
	return Row{
		Key: machineSetKey(ms),
		Cells: []string{ms.Name, count(ms.Desired), count(ms.Current), count(ms.Ready), count(ms.Available),
			osName, ms.Platform, formatAge(env.Now, ms.Created)},
		Tones:   []Tone{toneNormal, toneNormal, toneNormal, readyTone, readyTone, toneNormal, toneMuted, toneMuted},
		ageCell: 8, born: ms.Created,
	}
}

func machineRows(ms *model.MachineSetInfo, env rowEnv) []Row {
	nameWidth := 0
	for _, m := range ms.Machines {
		nameWidth = max(nameWidth, len(m.Name))
	}
	parent := machineSetKey(ms)
	if len(ms.Machines) == 0 {
		return []Row{{Key: parent + "/-", Parent: parent, Span: true,
			Cells: []string{fmt.Sprintf("   %s no machines", env.Marks.Child)}, Tones: []Tone{toneMuted}}}
	}
	rows := make([]Row, 0, len(ms.Machines))
	for _, m := range ms.Machines {
		node := m.NodeName
		if node == "" {
			node = "(no node yet)"
		}
		line := fmt.Sprintf("   %s %-*s  %-12s  node: %s  age: %s", env.Marks.Child, nameWidth, m.Name,
			orDash(m.Phase), node, formatAge(env.Now, m.Created))
		rows = append(rows, Row{Key: parent + "/" + m.Name, Parent: parent, Span: true,
			Cells: []string{line}, Tones: []Tone{machinePhaseTone(m.Phase)}})
	}
	return rows
}

func machinePhaseTone(phase string) Tone {
	switch phase {
	case "Running":
		return toneNormal
	case "Failed", "Deleting":
		return toneBad
	}
	return toneWarn
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

var secretColumns = []Column{
	{Title: "SECRET", Max: 20},
	{Title: "PRESENT", Max: 7},
	{Title: "DETAILS", Max: 80, Min: 40, Flex: true},
	{Title: "STATUS", Max: 90, Min: 24, Flex: true},
}

// Keys of the secret rows, also used to find a secret's detail view.
const (
	secretKeyPrivateKey = "cloud-private-key"
	secretKeyUserData   = "windows-user-data"
	secretKeyPullSecret = "pull-secret"
)

// secretRows describes the three secrets WMCO needs; values never reach the UI, only their shape. Under
// the key, each Windows node says whether its pub-key-hash is the key's; under the pull secret, each mirror
// registry whether the pull secret has credentials for it.
func secretRows(snap *model.Snapshot, env rowEnv) []Row {
	if snap == nil {
		return nil
	}
	s := snap.Secrets
	rows := append([]Row{privateKeyRow(s.PrivateKey)}, nodeKeyRows(snap, env)...)
	rows = append(rows, userDataRow(s.UserData, s.PrivateKey), pullSecretRow(s))
	return append(rows, mirrorCredentialRows(snap, env)...)
}

// nodeKeyRows compare each Windows node's pub-key-hash with the key's: a node WMCO configured with
// another key is deleted and recreated (Machine) or reconfigured (BYOH) by the operator.
func nodeKeyRows(snap *model.Snapshot, env rowEnv) []Row {
	key := snap.Secrets.PrivateKey.PubKeyHash
	nodes := snap.WindowsNodes()
	if key == "" || len(nodes) == 0 {
		return nil
	}
	width := 0
	for _, n := range nodes {
		width = max(width, len(n.Name))
	}
	rows := make([]Row, 0, len(nodes))
	for _, n := range nodes {
		text, tone := nodeKeyState(n, key)
		line := fmt.Sprintf("   %s node %-*s  %s", env.Marks.Child, width, n.Name, text)
		rows = append(rows, Row{Key: secretKeyPrivateKey + "/" + n.Name, Parent: secretKeyPrivateKey, Span: true,
			Cells: []string{line}, Tones: []Tone{tone}})
	}
	return rows
}

func nodeKeyState(n model.NodeInfo, key string) (string, Tone) {
	hash := n.Annotations[config.PubKeyHashAnnotation]
	switch {
	case hash == "":
		return "no pub-key-hash: not configured by WMCO (standalone, or still joining)", toneMuted
	case hash == key:
		return "pub-key-hash matches the key", toneGood
	case n.Machine != "":
		return "pub-key-hash differs: WMCO deletes this Machine and creates a new one with the current key", toneBad
	}
	return "pub-key-hash differs: WMCO reconfigures this host with the current key", toneWarn
}

// mirrorCredentialRows list the registries the mirror sets point at, each with whether the pull secret
// holds credentials for it (a mirror that needs them and has none fails every pull through it).
func mirrorCredentialRows(snap *model.Snapshot, env rowEnv) []Row {
	if !snap.Secrets.PullSecret || snap.Secrets.PullSecretHint != "" {
		return nil
	}
	var registries []string
	seen := map[string]bool{}
	for _, m := range snap.Mirrors {
		for _, ref := range m.Mirrors {
			if !seen[ref] {
				seen[ref] = true
				registries = append(registries, ref)
			}
		}
	}
	sort.Strings(registries)
	rows := make([]Row, 0, len(registries))
	for _, ref := range registries {
		text, tone := "credentials: yes", toneGood
		if !snap.Secrets.HasCredentials(ref) {
			text, tone = "credentials: none (fine for a registry that allows anonymous pulls)", toneWarn
		}
		rows = append(rows, Row{Key: secretKeyPullSecret + "/" + ref, Parent: secretKeyPullSecret, Span: true,
			Cells: []string{fmt.Sprintf("   %s mirror %s  %s", env.Marks.Child, ref, text)}, Tones: []Tone{tone}})
	}
	return rows
}

func presence(ok bool) (string, Tone) {
	if ok {
		return "yes", toneGood
	}
	return "no", toneBad
}

func privateKeyRow(k model.KeyInfo) Row {
	present, presentTone := presence(k.Present)
	details := ""
	if k.Present && k.Type != "" {
		details = strings.TrimSpace(fmt.Sprintf("%s %s %s", k.Type, bitsText(k.Bits), k.Fingerprint))
	}
	status, tone := privateKeyStatus(k)
	return Row{Key: secretKeyPrivateKey,
		Cells: []string{config.PrivateKeySecret, present, details, status},
		Tones: []Tone{toneNormal, presentTone, toneNormal, tone}}
}

func bitsText(bits int) string {
	if bits == 0 {
		return ""
	}
	return fmt.Sprintf("%d bits", bits)
}

func privateKeyStatus(k model.KeyInfo) (string, Tone) {
	switch {
	case !k.Present:
		return "missing: create it from the private key used for the Windows instances (" +
			"oc create secret generic " + config.PrivateKeySecret + " --from-file=" + config.PrivateKeySecretKey +
			"=<key file> -n " + config.OperatorNamespace + ")", toneBad
	case k.Problem != "":
		return k.Problem, toneBad
	case k.Warning != "":
		return k.Warning, toneWarn
	}
	return "ok", toneGood
}

func userDataRow(u model.UserDataInfo, k model.KeyInfo) Row {
	present, presentTone := presence(u.Present)
	details := ""
	if u.KeyFingerprint != "" {
		details = "authorized key " + u.KeyFingerprint
	}
	status, tone := userDataStatus(u, k)
	return Row{Key: secretKeyUserData,
		Cells: []string{config.UserDataSecret, present, details, status},
		Tones: []Tone{toneNormal, presentTone, toneNormal, tone}}
}

func userDataStatus(u model.UserDataInfo, k model.KeyInfo) (string, Tone) {
	switch {
	case !u.Present:
		return "missing: WMCO creates it from " + config.PrivateKeySecret + "; check that the key secret exists", toneBad
	case u.Problem != "":
		return u.Problem, toneBad
	case !k.Present:
		return "cannot compare: " + config.PrivateKeySecret + " is missing", toneWarn
	case !u.MatchesKey:
		return "key does not match " + config.PrivateKeySecret + ": new Machines will reject SSH; " +
			"let WMCO regenerate it", toneBad
	}
	return "key matches " + config.PrivateKeySecret, toneGood
}

func pullSecretRow(s model.SecretsInfo) Row {
	present, presentTone := presence(s.PullSecret)
	status, tone := "ok", toneGood
	details := s.PullSecretHint
	switch {
	case !s.PullSecret:
		status, tone = "missing: nodes cannot pull images from authenticated registries", toneBad
	case s.PullSecretHint != "":
		status, tone = "unreadable", toneBad
	default:
		details = fmt.Sprintf("%d registries: %s", len(s.PullRegistries), strings.Join(s.PullRegistries, ", "))
	}
	return Row{Key: secretKeyPullSecret,
		Cells: []string{config.PullSecret, present, details, status},
		Tones: []Tone{toneNormal, presentTone, toneMuted, tone}}
}

var mirrorColumns = []Column{
	{Title: "SOURCE -> MIRRORS", Max: 100, Min: 40, Flex: true},
	{Title: "KIND", Max: 4},
	{Title: "POLICY", Max: 21},
	{Title: "OBJECT", Max: 40, Min: 16, Flex: true},
}

// mirrorKey identifies one mirror entry.
func mirrorKey(m *model.MirrorInfo) string { return m.Kind + "/" + m.Object + "/" + m.Source }

// mirrorRows lists IDMS and ITMS entries as `source → mirror1, mirror2`.
func mirrorRows(snap *model.Snapshot, env rowEnv) []Row {
	if snap == nil {
		return nil
	}
	rows := make([]Row, 0, len(snap.Mirrors))
	for i := range snap.Mirrors {
		m := &snap.Mirrors[i]
		policy, tone := m.Policy, toneNormal
		if policy == "" {
			policy, tone = "AllowContactingSource", toneMuted
		}
		rows = append(rows, Row{
			Key:   mirrorKey(m),
			Cells: []string{m.Source + " " + env.Marks.Arrow + " " + strings.Join(m.Mirrors, ", "), mirrorKindShort(m.Kind), policy, m.Object},
			Tones: []Tone{toneNormal, toneNormal, tone, toneMuted},
		})
	}
	return rows
}

func mirrorKindShort(kind string) string {
	switch kind {
	case "ImageDigestMirrorSet":
		return "IDMS"
	case "ImageTagMirrorSet":
		return "ITMS"
	}
	return kind
}
