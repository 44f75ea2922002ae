package ui

import (
	"charm.land/bubbles/v2/key"

	"github.com/wmcon/wmcon/cmdline"
	"github.com/wmcon/wmcon/ui/binding"
)

// commandKeyer is a view whose keys do what some headless commands do (the health view: restart, logs,
// reboot, check again).
type commandKeyer interface {
	CommandKeys() []binding.CommandKey
}

// commandKeys are the keys that, pressed now, do what the action panel's hints name as commands: the top
// view's, or with no view open the Nodes pane's on the selected node. Actions speak in commands
// (event.Run); only a key that works now and acts on the node the command names is offered, so a
// read-only console, a batch of marked nodes or another pane adds none.
func (m Model) commandKeys() []binding.CommandKey {
	if top := m.top(); top != nil {
		if k, ok := top.(commandKeyer); ok {
			return k.CommandKeys()
		}
		return nil
	}
	if m.active != paneNodes || m.filtering || len(m.panes[paneNodes].markedKeys()) > 0 {
		return nil
	}
	n, ok := m.selectedNode()
	if !ok {
		return nil
	}
	k := m.ctx.Keys
	var out []binding.CommandKey
	add := func(b key.Binding, key, command string) {
		if b.Enabled() && !m.ctx.ReadOnly {
			out = append(out, binding.CommandKey{Command: command, Key: key})
		}
	}
	name := n.Name
	add(k.Uncordon, k.Uncordon.Help().Key, cmdline.Wmcon("uncordon", name))
	add(k.Cordon, k.Cordon.Help().Key, cmdline.Wmcon("cordon", name))
	add(k.Drain, k.Drain.Help().Key, cmdline.Wmcon("drain", name))
	add(k.Drain, k.Drain.Help().Key+" (tick disable eviction)", cmdline.Wmcon("drain", name, "--on-pdb", "disable-eviction", "--yes-disable-eviction"))
	if n.Windows {
		add(k.Reboot, k.Reboot.Help().Key, cmdline.Wmcon("reboot", name))
		add(k.Reboot, k.Reboot.Help().Key+" (tick disable eviction)",
			cmdline.Wmcon("reboot", name, "--on-pdb", "disable-eviction", "--yes-disable-eviction"))
		// Reading keys work read-only too.
		if k.Health.Enabled() {
			out = append(out, binding.CommandKey{Command: cmdline.Wmcon("triage", name), Key: k.Health.Help().Key})
		}
		if k.Logs.Enabled() {
			out = append(out, binding.CommandKey{Command: cmdline.Wmcon("logs", name, "--service", "kubelet"), Key: k.Logs.Help().Key})
		}
	}
	return out
}
