package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/machinesets"
)

// byohGroupKey is the row that heads the BYOH hosts in the MachineSets pane; their rows are its children.
const byohGroupKey = "byoh"

// byohRows lists the hosts of windows-instances as their own group under the MachineSets: address, user and
// the node each became (or why not yet), then the entries WMCO cannot use.
func byohRows(snap *model.Snapshot, env rowEnv) []Row {
	if len(snap.BYOH) == 0 && len(snap.BYOHProblems) == 0 {
		return nil
	}
	rows := []Row{byohGroupRow(snap)}
	w := 0
	for _, b := range snap.BYOH {
		w = max(w, len(b.Address))
	}
	for _, b := range snap.BYOH {
		node, tone := byohNode(snap, b.Address)
		line := fmt.Sprintf("   %s %-*s  user: %-14s  %s", env.Marks.Child, w, b.Address, b.User, node)
		rows = append(rows, Row{Key: byohGroupKey + "/" + b.Address, Parent: byohGroupKey, Span: true, Cells: []string{line}, Tones: []Tone{tone}})
	}
	for i, p := range snap.BYOHProblems {
		rows = append(rows, Row{Key: fmt.Sprintf("%s/!%d", byohGroupKey, i), Parent: byohGroupKey, Span: true,
			Cells: []string{fmt.Sprintf("   %s %s", env.Marks.Child, p)}, Tones: []Tone{toneBad}})
	}
	return rows
}

// byohGroupRow heads the BYOH group; with WMCO installed and an entry wrong it says, in the bad tone, that
// WMCO configures none of them until that entry is fixed, and how.
func byohGroupRow(snap *model.Snapshot) Row {
	head := fmt.Sprintf("BYOH hosts (windows-instances): %d", len(snap.BYOH))
	stall, ok := snap.BYOHStall()
	if !ok {
		return Row{Key: byohGroupKey, Span: true, Cells: []string{head}}
	}
	fix := "wmcon byoh list"
	if stall.Fix != "" {
		fix = stall.Fix
	}
	head += " — STALLED: WMCO configures none of them while an entry below is wrong; fix: " + fix
	return Row{Key: byohGroupKey, Span: true, Cells: []string{head}, Tones: []Tone{toneBad}}
}

// byohNode says which node a BYOH host became, or why there is none.
func byohNode(snap *model.Snapshot, addr string) (string, Tone) {
	name, ok := snap.NodeByAddress(addr)
	switch {
	case !ok && snap.Cluster.WMCOVersion == "":
		// Standalone: wmcon itself configures the host, so the row names the command that does.
		return "node: none — wmcon configures it: wmcon configure --address " + addr, toneWarn
	case !ok:
		return "node: none yet — WMCO has not configured it (why: its log, O; the host: wmcon byoh validate --ssh)", toneWarn
	}
	n, _ := snap.Node(name)
	if n.Status != model.NodeReady {
		return "node: " + name + " (" + string(n.Status) + ")", toneWarn
	}
	return "node: " + name, toneNormal
}

// selectedBYOH is the BYOH host under the cursor; group is true when the cursor is anywhere in the BYOH group.
func (m *Model) selectedBYOH() (addr string, group bool) {
	r, ok := m.panes[paneMachineSets].selected()
	if !ok {
		return "", false
	}
	switch {
	case r.Key == byohGroupKey:
		return "", true
	case r.Parent == byohGroupKey && !strings.HasPrefix(r.Key, byohGroupKey+"/!"):
		return strings.TrimPrefix(r.Key, byohGroupKey+"/"), true
	case r.Parent == byohGroupKey:
		return "", true
	}
	return "", false
}

// selectedMachineSet is the MachineSet under the cursor (or the one of the Machine under it).
func (m *Model) selectedMachineSet() (*model.MachineSetInfo, bool) {
	r, ok := m.panes[paneMachineSets].selected()
	if !ok || m.snap == nil || r.Key == byohGroupKey || r.Parent == byohGroupKey {
		return nil, false
	}
	return findMachineSet(m.snap, r.Key)
}

// handleMachineSetsKey handles n (new MachineSet, or new BYOH host in the BYOH group), s (scale) and x
// (delete the MachineSet, or remove the BYOH host) in the MachineSets pane.
func (m *Model) handleMachineSetsKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := m.ctx.Keys
	if m.active != paneMachineSets || !key.Matches(msg, k.SetupNew, k.SetupScale, k.SetupDelete) {
		return nil, false
	}
	if m.actionRunning() {
		m.status = "an action is running: wait for it, or esc to cancel it"
		return nil, true
	}
	addr, inBYOH := m.selectedBYOH()
	ms, onSet := m.selectedMachineSet()
	switch {
	case key.Matches(msg, k.SetupNew) && inBYOH:
		return m.push(machinesets.NewBYOHForm(m.ctx, m.snap.Cluster.WMCOVersion != "")), true
	case key.Matches(msg, k.SetupNew):
		f := machinesets.NewMachineSetForm(m.ctx)
		f.Check = machinesets.CheckByPreview(m.ctx)
		return m.push(f), true
	case key.Matches(msg, k.SetupDelete) && addr != "":
		node, _ := m.snap.NodeByAddress(addr)
		return m.start(request.BYOHRemove{Address: addr, Node: node}), true
	case !onSet:
		m.status = "select a MachineSet (or, with x, a BYOH host) first"
	case key.Matches(msg, k.SetupScale):
		return m.push(machinesets.NewScaleForm(m.ctx, ms)), true
	case !ms.Windows:
		m.status = ms.Name + " is a Linux MachineSet: wmcon deletes Windows MachineSets only (use oc for the others)"
	default:
		return m.start(request.MachineSetDelete{Name: ms.Name}), true
	}
	return nil, true
}
