package ui

import (
	"slices"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// readOnlyStatus is what the status line says when a key that changes the cluster is pressed read-only.
const readOnlyStatus = ": refused read-only; restart wmcon without --read-only"

// refuseReadOnly says why a key that would change something does nothing under --read-only: those keys
// are off (and out of the help), so without this the console would stay silent. It reports whether msg
// was such a key.
func (m *Model) refuseReadOnly(msg tea.KeyPressMsg) bool {
	if !m.ctx.ReadOnly {
		return false
	}
	k := m.ctx.Keys
	changing := []key.Binding{k.Reboot, k.Drain, k.Cordon, k.Uncordon, k.Configure, k.Upgrade}
	switch m.active {
	case paneMirrors:
		changing = append(changing, k.MirrorsApply)
	case paneMachineSets:
		changing = append(changing, k.SetupNew, k.SetupScale, k.SetupDelete)
	}
	for _, l := range launchers {
		writable := *m.ctx
		writable.ReadOnly = false
		if !l.Works(m.ctx) && l.Works(&writable) {
			changing = append(changing, l.Key)
		}
	}
	for _, b := range changing {
		if slices.Contains(b.Keys(), msg.String()) {
			m.status = msg.String() + " (" + b.Help().Desc + ")" + readOnlyStatus
			return true
		}
	}
	return false
}
