package ui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
)

// detailTarget is what a detail view shows: a pane and the key of a row in it. The content is rebuilt
// from every new snapshot, so a detail view stays live.
type detailTarget struct {
	pane paneKind
	key  string
}

// nodeExtras is what a node's details view read beyond the snapshot (pods, events, YAML), or why not.
type nodeExtras struct {
	on      bool // the console can read them (Options.NodeDetail)
	loading bool
	detail  *model.NodeDetail
	err     error
}

// detailContent renders the detail view of the target from the snapshot (and, for a node, what the view
// read of it besides).
func detailContent(st *Styles, snap *model.Snapshot, t detailTarget, env rowEnv, extras nodeExtras) (title, body string) {
	d := detailWriter{st: st}
	switch t.pane {
	case paneNodes:
		n, ok := snap.Node(t.key)
		if !ok {
			return "Node " + t.key, "node " + t.key + " no longer exists; press esc to go back to the list"
		}
		nodeDetail(&d, &n, env, extras)
		return "Node " + n.Name, d.String()
	case paneMachineSets:
		if ms, m, ok := findMachine(snap, t.key); ok {
			machineDetail(&d, ms, m, env)
			return "Machine " + ms.Namespace + "/" + m.Name, d.String()
		}
		ms, ok := findMachineSet(snap, t.key)
		if !ok {
			return "MachineSet " + t.key, "MachineSet " + t.key + " no longer exists; press esc to go back to the list"
		}
		machineSetDetail(&d, ms, env)
		return "MachineSet " + ms.Namespace + "/" + ms.Name, d.String()
	case paneSecrets:
		key, _, _ := strings.Cut(t.key, "/") // a node's or a mirror's row leads to its secret
		return "Secret " + key, secretDetail(&d, snap.Secrets, key)
	case paneMirrors:
		m, ok := findMirror(snap, t.key)
		if !ok {
			return "Mirror", "this mirror entry no longer exists; press esc to go back to the list"
		}
		mirrorDetail(&d, m, env)
		return mirrorKindShort(m.Kind) + " " + m.Object, d.String()
	}
	return "", ""
}

// findMachineSet finds a MachineSet by row key; a Machine's key leads to its MachineSet.
func findMachineSet(snap *model.Snapshot, key string) (*model.MachineSetInfo, bool) {
	for i := range snap.MachineSets {
		ms := &snap.MachineSets[i]
		k := machineSetKey(ms)
		if key == k || strings.HasPrefix(key, k+"/") {
			return ms, true
		}
	}
	return nil, false
}

func findMirror(snap *model.Snapshot, key string) (*model.MirrorInfo, bool) {
	for i := range snap.Mirrors {
		if mirrorKey(&snap.Mirrors[i]) == key {
			return &snap.Mirrors[i], true
		}
	}
	return nil, false
}

// detailWriter builds a detail page of titled sections and aligned key/value lines.
type detailWriter struct {
	st *Styles
	b  strings.Builder
}

func (d *detailWriter) section(title string) {
	if d.b.Len() > 0 {
		d.b.WriteString("\n")
	}
	d.b.WriteString(d.st.DetailTitle.Render(title) + "\n")
}

func (d *detailWriter) field(key, value string) {
	d.b.WriteString("  " + d.st.DetailKey.Render(padRight(key+":", 18)) + " " + value + "\n")
}

func (d *detailWriter) line(s string) { d.b.WriteString("  " + s + "\n") }

// pairs writes a sorted map, one entry a line; empty maps say so.
func (d *detailWriter) pairs(m map[string]string, show func(k, v string) string) {
	if len(m) == 0 {
		d.line(d.st.Muted.Render("(none)"))
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		d.line(k + "=" + show(k, m[k]))
	}
}

func (d *detailWriter) String() string { return strings.TrimRight(d.b.String(), "\n") }

func nodeDetail(d *detailWriter, n *model.NodeInfo, env rowEnv, extras nodeExtras) {
	status, _ := nodeStatus(n)
	d.section("Overview")
	d.field("Status", status)
	osName := "Linux"
	if n.Windows {
		osName = "Windows " + n.WindowsBuild
	}
	d.field("OS", strings.TrimSpace(osName))
	d.field("OS image", orDash(n.OSImage))
	d.field("Kubelet", orDash(n.KubeletVersion))
	d.field("Roles", nodeRoles(n.Roles))
	d.field("Age", formatAge(env.Now, n.Created))
	if n.Windows {
		d.section("WMCO")
		d.field("Version", orDash(n.WMCOVersion))
		d.field("Desired version", orDash(n.DesiredVersion))
		if n.VersionDrift {
			d.line(d.st.Warn.Render(env.Marks.Warn + " " + driftAdvice(n)))
		}
		d.field("BYOH", yesNo(n.BYOH))
		d.field("Reboot required", yesNo(n.RebootRequired))
		d.field("Upgrading", yesNo(n.Upgrading))
		d.field("SSH host key", pinnedText(n.HostKeyPinned))
	}
	d.section("Addresses")
	d.field("InternalIP", orDash(n.InternalIP))
	d.field("InternalDNS", orDash(n.InternalDNS))
	d.field("Machine", orDash(n.Machine))
	nodeResources(d, n)
	if env.Metrics != nil {
		nodeMetrics(d, n, env)
	}
	nodeConditions(d, n, env)
	if extras.on {
		nodePods(d, extras, env)
		nodeEvents(d, extras, env)
	}
	d.section("Taints")
	if len(n.Taints) == 0 {
		d.line(d.st.Muted.Render("(none)"))
	}
	for _, t := range n.Taints {
		d.line(t)
	}
	d.section("Labels")
	d.pairs(n.Labels, func(_, v string) string { return v })
	d.section("Annotations")
	d.pairs(n.Annotations, annotationValue)
}

func nodeConditions(d *detailWriter, n *model.NodeInfo, env rowEnv) {
	d.section("Conditions")
	if len(n.Conditions) == 0 {
		d.line(d.st.Muted.Render("(none reported)"))
		return
	}
	width := 0
	for _, c := range n.Conditions {
		width = max(width, len(c.Type))
	}
	for _, c := range n.Conditions {
		since := "since " + formatAge(env.Now, c.LastTransitionTime)
		line := fmt.Sprintf("%-*s  %-7s  %-28s  %s", width, c.Type, c.Status, c.Reason, since)
		if c.Message != "" {
			line += "  " + c.Message
		}
		d.line(d.st.tone(conditionTone(c)).Render(line))
	}
}

// conditionTone flags the conditions that are bad in their current state: Ready must be True, the
// pressure conditions must be False.
func conditionTone(c model.Condition) Tone {
	healthy := c.Status == "False"
	if c.Type == "Ready" {
		healthy = c.Status == "True"
	}
	if healthy {
		return toneNormal
	}
	return toneBad
}

// annotationValue keeps the detail view readable and free of anything sensitive: host keys are long and
// only their start identifies them, the username annotation is encrypted and meaningless to show.
func annotationValue(k, v string) string {
	switch k {
	case config.UsernameAnnotation:
		return "(encrypted)"
	case config.HostKeyAnnotation, config.PubKeyHashAnnotation:
		return shorten(v, 24)
	}
	return shorten(v, 160)
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func pinnedText(pinned bool) string {
	if pinned {
		return "pinned (ssh-host-key annotation)"
	}
	return "not pinned yet"
}

// findMachine finds a Machine by its row key (its MachineSet's key, then its name).
func findMachine(snap *model.Snapshot, key string) (*model.MachineSetInfo, *model.MachineInfo, bool) {
	for i := range snap.MachineSets {
		ms := &snap.MachineSets[i]
		name, ok := strings.CutPrefix(key, machineSetKey(ms)+"/")
		if !ok {
			continue
		}
		for j := range ms.Machines {
			if ms.Machines[j].Name == name {
				return ms, &ms.Machines[j], true
			}
		}
	}
	return nil, nil, false
}

// machineDetail describes one Machine: where it is in its life, the instance behind it, its addresses,
// the node it became, and why the machine API gave up on it when it did.
func machineDetail(d *detailWriter, ms *model.MachineSetInfo, m *model.MachineInfo, env rowEnv) {
	d.section("Machine")
	d.field("MachineSet", ms.Name)
	d.field("Phase", orDash(m.Phase))
	d.field("Node", orText(m.NodeName, "(no node yet)"))
	d.field("Instance", orText(m.ProviderID, "(none yet)"))
	d.field("Addresses", orText(strings.Join(m.Addresses, ", "), "(none yet)"))
	d.field("Age", formatAge(env.Now, m.Created))
	if m.ErrorReason != "" || m.ErrorMessage != "" {
		d.section("Error")
		d.field("Reason", orDash(m.ErrorReason))
		d.line(d.st.Bad.Render(orDash(m.ErrorMessage)))
	}
}

func machineSetDetail(d *detailWriter, ms *model.MachineSetInfo, env rowEnv) {
	d.section("MachineSet")
	d.field("Namespace", ms.Namespace)
	d.field("Desired", fmt.Sprint(ms.Desired))
	d.field("Current", fmt.Sprint(ms.Current))
	d.field("Ready", fmt.Sprint(ms.Ready))
	d.field("Available", fmt.Sprint(ms.Available))
	osName := "Linux"
	if ms.Windows {
		osName = "Windows"
	}
	d.field("OS", osName)
	d.field("Platform", orDash(ms.Platform))
	d.field("Instance type", orDash(ms.Provider.InstanceType))
	d.field("Zone", orDash(ms.Provider.Zone))
	d.field("Image", orDash(ms.Provider.Image))
	d.field("User data", orDash(ms.Provider.UserDataSecret))
	d.field("Age", formatAge(env.Now, ms.Created))
	d.section("Machines")
	if len(ms.Machines) == 0 {
		d.line(d.st.Muted.Render("(none)"))
	}
	for _, m := range ms.Machines {
		node := m.NodeName
		if node == "" {
			node = "(no node yet)"
		}
		d.line(fmt.Sprintf("%s  %s  node: %s  age: %s", m.Name, orDash(m.Phase), node, formatAge(env.Now, m.Created)))
	}
	d.section("Labels")
	d.pairs(ms.Labels, func(_, v string) string { return v })
}

// secretDetail describes one secret; the snapshot never carries values, and neither does this page.
func secretDetail(d *detailWriter, s model.SecretsInfo, key string) string {
	switch key {
	case secretKeyPrivateKey:
		k := s.PrivateKey
		status, _ := privateKeyStatus(k)
		d.section(config.OperatorNamespace + "/" + config.PrivateKeySecret)
		d.field("Present", yesNo(k.Present))
		d.field("Key type", orDash(k.Type))
		d.field("Size", orDash(bitsText(k.Bits)))
		d.field("Fingerprint", orDash(k.Fingerprint))
		d.field("Status", status)
		d.line(d.st.Muted.Render("WMCO signs in to Windows instances with this key (data key " + config.PrivateKeySecretKey + ")."))
	case secretKeyUserData:
		u := s.UserData
		status, _ := userDataStatus(u, s.PrivateKey)
		d.section(config.MachineAPINamespace + "/" + config.UserDataSecret)
		d.field("Present", yesNo(u.Present))
		d.field("Authorized key", orDash(u.KeyFingerprint))
		d.field("Matches key", yesNo(u.MatchesKey))
		d.field("Status", status)
		d.line(d.st.Muted.Render("New Windows Machines run this script at first boot to authorize the key."))
	case secretKeyPullSecret:
		d.section(config.OpenShiftConfigNS + "/" + config.PullSecret)
		d.field("Present", yesNo(s.PullSecret))
		d.field("Registries", orText(s.PullSecretHint, orDash(strings.Join(s.PullRegistries, ", "))))
	}
	return d.String()
}

func mirrorDetail(d *detailWriter, m *model.MirrorInfo, env rowEnv) {
	d.section(m.Kind + " " + m.Object)
	d.field("Source", m.Source)
	for i, mirror := range m.Mirrors {
		d.field(fmt.Sprintf("Mirror %d", i+1), mirror)
	}
	d.field("Source policy", orText(m.Policy, "AllowContactingSource"))
}

// driftAdvice says where a drifted node stands: WMCO has taken it up (its desired-version is the
// operator's), or has not got to it yet.
func driftAdvice(n *model.NodeInfo) string {
	if n.DriftPickedUp {
		return "not the operator's version: WMCO has taken the node up to reconfigure it"
	}
	return "not the operator's version, and the operator has not picked the node up yet: read its log"
}
