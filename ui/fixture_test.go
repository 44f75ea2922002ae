package ui

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/view"
)

// fixedNow is the clock of every test, so ages (and golden screens) never change.
var fixedNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return fixedNow.Add(-d) }

const (
	day     = 24 * time.Hour
	infraID = "ci-ln-x7k2m9b-72292"
)

func winMachineSet(zone string) string { return infraID + "-windows-us-east-2" + zone }

// fixtureSnapshot is a realistic cluster: three Linux masters, two Linux workers (one cordoned), Windows
// nodes from two AWS MachineSets (one NotReady, one with version drift), a BYOH Windows node, IDMS and
// ITMS entries and the WMCO secrets.
// fixtureKeyHash is the pub-key-hash of the fixture's cloud-private-key.
const fixtureKeyHash = "3f6a0c9d1e2b4a5f8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b"

// withKeyHashes annotates the fixture's Windows nodes as WMCO would: the first three with the current key's
// hash, the BYOH one with an older key's.
func withKeyHashes(s *model.Snapshot) *model.Snapshot {
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if !n.Windows {
			continue
		}
		hash := fixtureKeyHash
		if n.BYOH {
			hash = "0000000000000000000000000000000000000000000000000000000000000bad"
		}
		n.Annotations = map[string]string{config.PubKeyHashAnnotation: hash}
	}
	return s
}

func fixtureSnapshot() *model.Snapshot {
	s := &model.Snapshot{
		Seq:   7,
		Taken: fixedNow,
		Cluster: model.ClusterInfo{
			Server: "https://api.ci-ln-x7k2m9b.aws.example.com:6443", Context: "admin", Name: infraID, InfraID: infraID,
			Platform: "AWS", KubernetesVersion: "v1.33.4", OpenShiftVersion: "4.20.2",
			WMCOVersion: "10.20.0", WMCOPhase: "Succeeded", NetworkType: "OVNKubernetes",
		},
		Connection: model.Connection{Connected: true, Since: ago(2 * time.Hour)},
		Resources:  map[model.Resource]model.ResourceState{},
	}
	for _, r := range []model.Resource{model.ResNodes, model.ResMachineSets, model.ResMachines, model.ResSecrets,
		model.ResUserData, model.ResPullSecret, model.ResIDMS, model.ResITMS} {
		s.Resources[r] = model.ResourceState{Availability: model.Available}
	}
	s.Nodes = append(windowsNodes(), linuxNodes()...)
	s.MachineSets = fixtureMachineSets()
	s.Secrets = model.SecretsInfo{
		PrivateKey: model.KeyInfo{Present: true, Type: "ssh-rsa", Bits: 4096, Fingerprint: "SHA256:Vq3kV0mW2j8b4yq5bQ8n1h5Zl6Zt2s0Jx3cJ9m1N4aE",
			PubKeyHash: fixtureKeyHash},
		UserData:   model.UserDataInfo{Present: true, KeyFingerprint: "SHA256:Vq3kV0mW2j8b4yq5bQ8n1h5Zl6Zt2s0Jx3cJ9m1N4aE", MatchesKey: true},
		PullSecret: true, PullRegistries: []string{"cloud.openshift.com", "mirror.corp.example.com:5000", "quay.io", "registry.redhat.io"},
	}
	s.Mirrors = []model.MirrorInfo{
		{Kind: "ImageDigestMirrorSet", Object: "release-mirrors", Source: "quay.io/openshift-release-dev/ocp-release",
			Mirrors: []string{"mirror.corp.example.com:5000/ocp/release", "backup.corp.example.com/ocp/release"}},
		{Kind: "ImageDigestMirrorSet", Object: "release-mirrors", Source: "quay.io/openshift-release-dev/ocp-v4.0-art-dev",
			Mirrors: []string{"mirror.corp.example.com:5000/ocp/art-dev"}, Policy: "NeverContactSource"},
		{Kind: "ImageTagMirrorSet", Object: "windows-images", Source: "mcr.microsoft.com/windows/servercore",
			Mirrors: []string{"mirror.corp.example.com:5000/windows/servercore"}},
	}
	return s
}

func windowsNode(name, machineName, ip string, age time.Duration) model.NodeInfo {
	return model.NodeInfo{
		Name: name, UID: "uid-" + name, Status: model.NodeReady, Windows: true, WindowsBuild: "10.0.20348",
		OSImage: "Windows Server 2022 Datacenter", KubeletVersion: "v1.33.4-rc.0+7e1c3a2", Roles: []string{"worker"},
		WMCOVersion: "10.20.0-bc9a7b1", DesiredVersion: "10.20.0-bc9a7b1", InternalIP: ip,
		InternalDNS: name, Machine: config.MachineAPINamespace + "/" + machineName,
		HostKeyPinned: true, Created: ago(age),
		Conditions: []model.Condition{
			{Type: "MemoryPressure", Status: "False", Reason: "KubeletHasSufficientMemory", LastTransitionTime: ago(age)},
			{Type: "DiskPressure", Status: "False", Reason: "KubeletHasNoDiskPressure", LastTransitionTime: ago(age)},
			{Type: "PIDPressure", Status: "False", Reason: "KubeletHasSufficientPID", LastTransitionTime: ago(age)},
			{Type: "Ready", Status: "True", Reason: "KubeletReady", Message: "kubelet is posting ready status", LastTransitionTime: ago(age - time.Hour)},
		},
		Taints:      []string{"os=Windows:NoSchedule"},
		Capacity:    map[string]string{"cpu": "4", "memory": "16776412Ki", "pods": "250", "ephemeral-storage": "125293548Ki"},
		Allocatable: map[string]string{"cpu": "3500m", "memory": "15625436Ki", "pods": "250", "ephemeral-storage": "114396791822"},
		Labels: map[string]string{
			config.OSLabel: "windows", config.WindowsBuildLabel: "10.0.20348", config.WorkerRoleLabel: "",
			"topology.kubernetes.io/zone": "us-east-2a",
		},
		Annotations: map[string]string{
			config.VersionAnnotation:     "10.20.0-bc9a7b1",
			config.UsernameAnnotation:    "gAAAAABmQ1c2VjcmV0LWVuY3J5cHRlZC11c2VybmFtZQ==",
			config.HostKeyAnnotation:     "AAAAC3NzaC1lZDI1NTE5AAAAIHq8mW1cM3sQ0xQzN4yKp9v2fT7s6wL1dE5rJ8hB0aZc",
			config.HostKeyTypeAnnotation: "ssh-ed25519",
			config.MachineAnnotation:     config.MachineAPINamespace + "/" + machineName,
		},
	}
}

func windowsNodes() []model.NodeInfo {
	a1 := windowsNode("ip-127-0-17-41.us-east-2.compute.internal", winMachineSet("a")+"-ax9k2", "127.0.17.41", 5*day)
	a2 := windowsNode("ip-127-0-23-188.us-east-2.compute.internal", winMachineSet("a")+"-bq7vd", "127.0.23.188", 3*time.Hour)
	a2.Status = model.NodeNotReady
	a2.Conditions[3] = model.Condition{Type: "Ready", Status: "False", Reason: "KubeletNotReady",
		Message: "container runtime network not ready", LastTransitionTime: ago(12 * time.Minute)}
	b1 := windowsNode("ip-127-0-45-7.us-east-2.compute.internal", winMachineSet("b")+"-h2kfs", "127.0.45.7", 2*day)
	b1.WMCOVersion, b1.VersionDrift, b1.DriftPickedUp = "10.19.1-0f3c2d4", true, true
	byoh := windowsNode("win-byoh-01.corp.example.com", "", "127.168.50.21", 40*day)
	byoh.BYOH, byoh.Machine, byoh.WindowsBuild = true, "", "10.0.17763"
	byoh.Labels[config.BYOHLabel] = "true"
	delete(byoh.Annotations, config.MachineAnnotation)
	return []model.NodeInfo{a1, a2, b1, byoh}
}

func linuxNode(name, ip string, roles []string, age time.Duration) model.NodeInfo {
	return model.NodeInfo{
		Name: name, UID: "uid-" + name, Status: model.NodeReady, OSImage: "Red Hat Enterprise Linux CoreOS 9.6",
		KubeletVersion: "v1.33.4", Roles: roles, InternalIP: ip, Created: ago(age),
		Conditions: []model.Condition{{Type: "Ready", Status: "True", Reason: "KubeletReady", LastTransitionTime: ago(age)}},
		Labels:     map[string]string{config.OSLabel: "linux"},
	}
}

func linuxNodes() []model.NodeInfo {
	m := []string{"control-plane", "master"}
	w1 := linuxNode("ip-127-0-60-12.us-east-2.compute.internal", "127.0.60.12", []string{"worker"}, 6*day)
	w1.Unschedulable = true
	w1.Taints = []string{"node.kubernetes.io/unschedulable:NoSchedule"}
	return []model.NodeInfo{
		linuxNode("ip-127-0-1-100.us-east-2.compute.internal", "127.0.1.100", m, 6*day),
		linuxNode("ip-127-0-2-101.us-east-2.compute.internal", "127.0.2.101", m, 6*day),
		linuxNode("ip-127-0-3-102.us-east-2.compute.internal", "127.0.3.102", m, 6*day),
		w1,
		linuxNode("ip-127-0-61-13.us-east-2.compute.internal", "127.0.61.13", []string{"worker"}, 6*day),
	}
}

func fixtureMachineSets() []model.MachineSetInfo {
	ns := config.MachineAPINamespace
	machine := func(set, suffix, phase, node string, age time.Duration) model.MachineInfo {
		return model.MachineInfo{Name: set + "-" + suffix, Phase: phase, NodeName: node, Created: ago(age)}
	}
	winA, winB := winMachineSet("a"), winMachineSet("b")
	workerA, workerB := infraID+"-worker-us-east-2a", infraID+"-worker-us-east-2b"
	labels := map[string]string{config.MachineSetClusterLabel: infraID}
	return []model.MachineSetInfo{
		{Namespace: ns, Name: winA, Desired: 2, Current: 2, Ready: 1, Available: 1, Windows: true, Platform: "AWS",
			Created: ago(5 * day), Labels: labels, Machines: []model.MachineInfo{
				machine(winA, "ax9k2", "Running", "ip-127-0-17-41.us-east-2.compute.internal", 5*day),
				machine(winA, "bq7vd", "Provisioned", "ip-127-0-23-188.us-east-2.compute.internal", 3*time.Hour),
			}},
		{Namespace: ns, Name: winB, Desired: 1, Current: 1, Ready: 1, Available: 1, Windows: true, Platform: "AWS",
			Created: ago(2 * day), Labels: labels, Machines: []model.MachineInfo{
				machine(winB, "h2kfs", "Running", "ip-127-0-45-7.us-east-2.compute.internal", 2*day),
			}},
		{Namespace: ns, Name: workerA, Desired: 1, Current: 1, Ready: 1, Available: 1, Platform: "AWS",
			Created: ago(6 * day), Labels: labels, Machines: []model.MachineInfo{
				machine(workerA, "p8d2x", "Running", "ip-127-0-60-12.us-east-2.compute.internal", 6*day),
			}},
		{Namespace: ns, Name: workerB, Desired: 1, Current: 1, Ready: 1, Available: 1, Platform: "AWS",
			Created: ago(6 * day), Labels: labels, Machines: []model.MachineInfo{
				machine(workerB, "r4m7z", "Running", "ip-127-0-61-13.us-east-2.compute.internal", 6*day),
			}},
	}
}

// bigSnapshot has n nodes (half Windows) for benchmarks.
func bigSnapshot(n int) *model.Snapshot {
	s := fixtureSnapshot()
	s.Nodes = make([]model.NodeInfo, 0, n)
	for i := range n {
		ip := fmt.Sprintf("127.%d.%d.%d", i/65536, (i/256)%256, i%256)
		name := fmt.Sprintf("ip-%s.us-east-2.compute.internal", strings.ReplaceAll(ip, ".", "-"))
		if i%2 == 0 {
			s.Nodes = append(s.Nodes, windowsNode(name, winMachineSet("a")+fmt.Sprintf("-%05d", i), ip, time.Duration(i)*time.Minute))
		} else {
			s.Nodes = append(s.Nodes, linuxNode(name, ip, []string{"worker"}, time.Duration(i)*time.Minute))
		}
	}
	return s
}

func testOptions() Options {
	return Options{NoColor: true, Now: func() time.Time { return fixedNow }}
}

// newTestModel is the console at 120×40 showing snap.
func newTestModel(snap *model.Snapshot) Model {
	m := New(NewProgramContext(testOptions()), nil)
	m = update(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	if snap != nil {
		m = update(m, snapshotMsg{snap})
	}
	return m
}

func update(m Model, msgs ...tea.Msg) Model {
	for _, msg := range msgs {
		next, _ := m.Update(msg)
		m = next.(Model)
	}
	return m
}

// press turns key names into key presses ("j", "enter", "shift+tab", "space").
func press(keys ...string) []tea.Msg {
	var msgs []tea.Msg
	for _, k := range keys {
		msgs = append(msgs, keyPress(k))
	}
	return msgs
}

func keyPress(k string) tea.KeyPressMsg {
	special := map[string]tea.Key{
		"enter": {Code: tea.KeyEnter}, "esc": {Code: tea.KeyEscape}, "tab": {Code: tea.KeyTab},
		"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift}, "space": {Code: tea.KeySpace, Text: " "},
		"up": {Code: tea.KeyUp}, "down": {Code: tea.KeyDown}, "left": {Code: tea.KeyLeft}, "right": {Code: tea.KeyRight},
		"pgup": {Code: tea.KeyPgUp}, "pgdown": {Code: tea.KeyPgDown}, "home": {Code: tea.KeyHome}, "end": {Code: tea.KeyEnd},
		"backspace": {Code: tea.KeyBackspace}, "ctrl+c": {Code: 'c', Mod: tea.ModCtrl},
	}
	if key, ok := special[k]; ok {
		return tea.KeyPressMsg(key)
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

func typeText(s string) []tea.Msg {
	var msgs []tea.Msg
	for _, r := range s {
		msgs = append(msgs, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return msgs
}

// screen is the view without any escape codes, for assertions on text.
func screen(m Model) string { return ansi.Strip(m.View().Content) }

// asciiScreen is the view as an ASCII-profile terminal gets it: no colours, attributes kept (reverse
// selection, underlined matches), which is what golden files record.
func asciiScreen(tb testing.TB, content string) string {
	tb.Helper()
	var b bytes.Buffer
	w := &colorprofile.Writer{Forward: &b, Profile: colorprofile.ASCII}
	if _, err := w.Write([]byte(content)); err != nil {
		tb.Fatal(err)
	}
	return b.String()
}

func stripANSI(s string) string { return ansi.Strip(s) }

// onList says the list has the keyboard: no view is open and the filter prompt is closed.
func onList(m Model) bool { return m.top() == nil && !m.filtering }

// isTop says the view on top of the stack is a T; topOf returns it (or T's zero value).
func isTop[T view.Component](m Model) bool { _, ok := m.top().(T); return ok }

func topOf[T view.Component](m Model) T { v, _ := m.top().(T); return v }
