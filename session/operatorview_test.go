package session

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/sim/demo"
	"github.com/wmcon/wmcon/testsupport/uidriver"
	"github.com/wmcon/wmcon/ui"
)

// The console's Operator view on the fresh demo, through the session's real Runner: nothing installed, then
// the demo's key installed from its file (standalone: windows-user-data written for it), WMCO installed
// through the OLM stand-in until the view shows it installed, and the uninstall's question as a dialog.
func TestFreshDemoOperatorView(t *testing.T) {
	cache, err := os.MkdirTemp("", "ov") // short: the key's path shows whole in the form
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(cache) })
	t.Setenv("XDG_CACHE_HOME", cache)
	audit := t.TempDir() + "/audit.log"
	t.Setenv("WMCON_AUDIT_LOG", audit)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := New(ctx, Options{Backend: newDemo(t, demo.Options{Fresh: true}), SSH: SSHOptions{SSHConfig: ""}})
	require.NoError(t, err)
	defer s.Close()

	opts := ui.Options{NoColor: true, Backend: ui.Backend{Runner: s.Runner}, KeyFile: demo.DefaultBYOHKeyFile()}
	d := uidriver.New(t, ui.New(ui.NewProgramContext(opts), s.Watcher.Snapshots()), 160, 45)
	d.WaitFor(30*time.Second, "no Windows nodes yet")
	d.Press("O")
	d.WaitFor(30*time.Second, "WMCO is not installed", "cloud-private-key: missing", "windows-user-data: missing")

	d.Press("f")
	d.WaitFor(10*time.Second, "Install a private key", demo.DefaultBYOHKeyFile())
	d.Press("enter")
	d.WaitFor(60*time.Second, "SUCCEEDED key installed, and windows-user-data authorizes it")
	d.WaitFor(30*time.Second, "(matches cloud-private-key)")

	d.Press("i")
	d.WaitFor(10*time.Second, "Install WMCO through OLM", "catalog source")
	d.Press("enter", "enter", "enter")
	d.WaitFor(120*time.Second, "WMCO 11.0.1 installed")

	d.Press("x")
	d.WaitFor(30*time.Second, "Uninstall WMCO?")

	records, err := actions.ReadAudit(s.Runner.Backends.Audit.Path) // the demo's own log, never $WMCON_AUDIT_LOG
	require.NoError(t, err)
	var audited []string
	for _, r := range records {
		audited = append(audited, r.Action)
	}
	require.Contains(t, audited, "key-create")
	require.Contains(t, audited, "operator-install")
	require.NotContains(t, audited, "operator-status", "reads are not audited")
	_, err = os.Stat(audit)
	require.ErrorIs(t, err, os.ErrNotExist, "the demo never writes the user's log")
}
