package ui

import (
	"fmt"
	"strings"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/page"
	"github.com/wmcon/wmcon/ui/styles"
)

// detailTarget is what a detail view shows: a pane and the key of a row in it. The content is rebuilt
// from every new snapshot, so a detail view stays live.
type detailTarget struct {
	pane paneKind
	key  string
}

// nodeExtras is what a node's details view read beyond the snapshot (pods, events, YAML), or why not.
type nodeExtras struct {
	on      bool // the console can read them (Backend.NodeDetail)
	loading bool
	detail  *model.NodeDetail
	err     error
}

// detailContent renders the detail view of the target from the snapshot (and, for a node, what the view
// read of it besides).
func detailContent(st *styles.Styles, snap *model.Snapshot, t detailTarget, env rowEnv, extras nodeExtras) (title, body string) {
	d := page.Writer{Styles: st}
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

func nodeDetail(d *page.Writer, n *model.NodeInfo, env rowEnv, extras nodeExtras) {
	status, _ := nodeStatus(n)
	d.Section("Overview")
	d.Field("Status", status)
	osName := "Linux"
	if n.Windows {
		osName = "Windows " + n.WindowsBuild
	}
	d.Field("OS", strings.TrimSpace(osName))
	d.Field("OS image", orDash(n.OSImage))
	d.Field("Kubelet", orDash(n.KubeletVersion))
	d.Field("Roles", nodeRoles(n.Roles))
	d.Field("Age", formatAge(env.Now, n.Created))
	if n.Windows {
		d.Section("WMCO")
		d.Field("Version", orDash(n.WMCOVersion))
		d.Field("Desired version", orDash(n.DesiredVersion))
		if n.VersionDrift {
			d.Line(d.Styles.Warn.Render(env.Marks.Warn + " " + driftAdvice(n)))
		}
		d.Field("BYOH", yesNo(n.BYOH))
		d.Field("Reboot required", yesNo(n.RebootRequired))
		d.Field("Upgrading", yesNo(n.Upgrading))
		d.Field("SSH host key", pinnedText(n.HostKeyPinned))
	}
	d.Section("Addresses")
	d.Field("InternalIP", orDash(n.InternalIP))
	d.Field("InternalDNS", orDash(n.InternalDNS))
	d.Field("Machine", orDash(n.Machine))
	nodeResources(d, n)
	if env.Metrics != nil {
		nodeMetrics(d, n, env)
	}
	nodeConditions(d, n, env)
	if extras.on {
		nodePods(d, extras, env)
		nodeEvents(d, extras, env)
	}
	d.Section("Taints")
	if len(n.Taints) == 0 {
		d.Line(d.Styles.Muted.Render("(none)"))
	}
	for _, t := range n.Taints {
		d.Line(t)
	}
	d.Section("Labels")
	d.Pairs(n.Labels, func(_, v string) string { return v })
	d.Section("Annotations")
	d.Pairs(n.Annotations, annotationValue)
}

func nodeConditions(d *page.Writer, n *model.NodeInfo, env rowEnv) {
	d.Section("Conditions")
	if len(n.Conditions) == 0 {
		d.Line(d.Styles.Muted.Render("(none reported)"))
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
		d.Line(toneStyle(d.Styles, conditionTone(c)).Render(line))
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
func machineDetail(d *page.Writer, ms *model.MachineSetInfo, m *model.MachineInfo, env rowEnv) {
	d.Section("Machine")
	d.Field("MachineSet", ms.Name)
	d.Field("Phase", orDash(m.Phase))
	d.Field("Node", orText(m.NodeName, "(no node yet)"))
	d.Field("Instance", orText(m.ProviderID, "(none yet)"))
	d.Field("Addresses", orText(strings.Join(m.Addresses, ", "), "(none yet)"))
	d.Field("Age", formatAge(env.Now, m.Created))
	if m.ErrorReason != "" || m.ErrorMessage != "" {
		d.Section("Error")
		d.Field("Reason", orDash(m.ErrorReason))
		d.Line(d.Styles.Bad.Render(orDash(m.ErrorMessage)))
	}
}

func machineSetDetail(d *page.Writer, ms *model.MachineSetInfo, env rowEnv) {
	d.Section("MachineSet")
	d.Field("Namespace", ms.Namespace)
	d.Field("Desired", fmt.Sprint(ms.Desired))
	d.Field("Current", fmt.Sprint(ms.Current))
	d.Field("Ready", fmt.Sprint(ms.Ready))
	d.Field("Available", fmt.Sprint(ms.Available))
	osName := "Linux"
	if ms.Windows {
		osName = "Windows"
	}
	d.Field("OS", osName)
	d.Field("Platform", orDash(ms.Platform))
	d.Field("Instance type", orDash(ms.Provider.InstanceType))
	d.Field("Zone", orDash(ms.Provider.Zone))
	d.Field("Image", orDash(ms.Provider.Image))
	d.Field("User data", orDash(ms.Provider.UserDataSecret))
	d.Field("Age", formatAge(env.Now, ms.Created))
	d.Section("Machines")
	if len(ms.Machines) == 0 {
		d.Line(d.Styles.Muted.Render("(none)"))
	}
	for _, m := range ms.Machines {
		node := m.NodeName
		if node == "" {
			node = "(no node yet)"
		}
		d.Line(fmt.Sprintf("%s  %s  node: %s  age: %s", m.Name, orDash(m.Phase), node, formatAge(env.Now, m.Created)))
	}
	d.Section("Labels")
	d.Pairs(ms.Labels, func(_, v string) string { return v })
}

// secretDetail describes one secret; the snapshot never carries values, and neither does this page.
func secretDetail(d *page.Writer, s model.SecretsInfo, key string) string {
	switch key {
	case secretKeyPrivateKey:
		k := s.PrivateKey
		status, _ := privateKeyStatus(k)
		d.Section(config.OperatorNamespace + "/" + config.PrivateKeySecret)
		d.Field("Present", yesNo(k.Present))
		d.Field("Key type", orDash(k.Type))
		d.Field("Size", orDash(bitsText(k.Bits)))
		d.Field("Fingerprint", orDash(k.Fingerprint))
		d.Field("Status", status)
		d.Line(d.Styles.Muted.Render("WMCO signs in to Windows instances with this key (data key " + config.PrivateKeySecretKey + ")."))
	case secretKeyUserData:
		u := s.UserData
		status, _ := userDataStatus(u, s.PrivateKey)
		d.Section(config.MachineAPINamespace + "/" + config.UserDataSecret)
		d.Field("Present", yesNo(u.Present))
		d.Field("Authorized key", orDash(u.KeyFingerprint))
		d.Field("Matches key", yesNo(u.MatchesKey))
		d.Field("Status", status)
		d.Line(d.Styles.Muted.Render("New Windows Machines run this script at first boot to authorize the key."))
	case secretKeyPullSecret:
		d.Section(config.OpenShiftConfigNS + "/" + config.PullSecret)
		d.Field("Present", yesNo(s.PullSecret))
		d.Field("Registries", orText(s.PullSecretHint, orDash(strings.Join(s.PullRegistries, ", "))))
	}
	return d.String()
}

func mirrorDetail(d *page.Writer, m *model.MirrorInfo, env rowEnv) {
	d.Section(m.Kind + " " + m.Object)
	d.Field("Source", m.Source)
	for i, mirror := range m.Mirrors {
		d.Field(fmt.Sprintf("Mirror %d", i+1), mirror)
	}
	d.Field("Source policy", orText(m.Policy, "AllowContactingSource"))
}

// driftAdvice says where a drifted node stands: WMCO has taken it up (its desired-version is the
// operator's), or has not got to it yet.
func driftAdvice(n *model.NodeInfo) string {
	if n.DriftPickedUp {
		return "not the operator's version: WMCO has taken the node up to reconfigure it"
	}
	return "not the operator's version, and the operator has not picked the node up yet: read its log"
}
