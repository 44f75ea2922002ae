package cli

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// withInfrastructure gives the test server the Infrastructure object an OpenShift cluster has, so audit
// records can name the cluster by it; removed when the test ends.
func withInfrastructure(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	conf := configclient.NewForConfigOrDie(srv.AdminConfig())
	inf, err := conf.ConfigV1().Infrastructures().Create(ctx, &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: config.ClusterSingletonName}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = conf.ConfigV1().Infrastructures().Delete(context.Background(), config.ClusterSingletonName, metav1.DeleteOptions{})
	})
	inf.Status.InfrastructureName = name
	inf.Status.ControlPlaneTopology = configv1.HighlyAvailableTopologyMode
	inf.Status.InfrastructureTopology = configv1.HighlyAvailableTopologyMode
	_, err = conf.ConfigV1().Infrastructures().UpdateStatus(ctx, inf, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// TestEveryChangeIsAudited: each command that changes a node or a host, run against the real API server and
// a simulated host, writes one record per node naming who acted and on which cluster (API server, context,
// infrastructure name).
func TestEveryChangeIsAudited(t *testing.T) {
	audit := filepath.Join(t.TempDir(), "audit.log")
	t.Setenv(actions.AuditEnv, audit)
	withInfrastructure(t, "audit-test-x7k2p")
	e := newNodeEnv(t, "cli-audit")
	h := newHeadlessHost(t, e, "cli-audit-win", "127.0.0.63")
	e.node("cli-audit-lin", false)
	h.host.StopService("kubelet") // restart-service starts it

	for _, args := range [][]string{
		{"cordon", h.node, "cli-audit-lin"},
		{"uncordon", h.node, "cli-audit-lin"},
		{"drain", "cli-audit-lin"},
		{"uncordon", "cli-audit-lin"},
		{"restart-service", h.node, "kubelet"}, // pins the host key on first use
		{"mirrors", "apply", h.node},           // a Runner request that once audited itself too: one record, not two
		{"hostkey", "forget", h.node},
	} {
		code, out, errOut := runWmcon(t, h.args(t, args...)...)
		require.Equal(t, 0, code, "%v\n%s\n%s", args, out, errOut)
	}

	records, err := actions.ReadAudit(audit)
	require.NoError(t, err)
	var got []string
	for _, r := range records {
		got = append(got, r.Action+" "+r.Node)
		assert.Equal(t, event.Succeeded, r.Outcome, "%s %s", r.Action, r.Node)
		assert.Equal(t, kubeapi.AdminUser, r.User, "who acted, as the cluster knows them")
		assert.Equal(t, actions.AuditCluster{Server: srv.Host(), Context: "wmcon-test", Infrastructure: "audit-test-x7k2p"}, r.Cluster,
			"%s %s names the cluster", r.Action, r.Node)
		assert.NotEmpty(t, r.Steps, "%s %s", r.Action, r.Node)
	}
	sort.Strings(got)
	assert.Equal(t, []string{
		"cordon cli-audit-lin", "cordon cli-audit-win",
		"drain cli-audit-lin",
		"hostkey-forget cli-audit-win",
		"mirrors-apply cli-audit-win",
		"restart-service cli-audit-win",
		"uncordon cli-audit-lin", "uncordon cli-audit-lin", "uncordon cli-audit-win",
	}, got)
	fi, err := os.Stat(audit)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// TestUnwritableAuditLogRefusesTheChange: when the audit log cannot be written, a change is refused before
// it starts, with a sentence naming the log, and nothing changes.
func TestUnwritableAuditLogRefusesTheChange(t *testing.T) {
	notAFile := t.TempDir() // a directory: no record can be appended to it, even as root
	t.Setenv(actions.AuditEnv, notAFile)
	e := newNodeEnv(t, "cli-audit-bad")
	e.node("cli-audit-bad-1", false)

	for _, args := range [][]string{
		{"cordon", "cli-audit-bad-1"},
		{"drain", "cli-audit-bad-1"},
		{"byoh", "add", "127.0.0.77", "--user", "Administrator"},
	} {
		code, out, errOut := runWmcon(t, kubeconfigArgs(t, args...)...)
		assert.Equal(t, ExitFailed, code, "%v\n%s\n%s", args, out, errOut)
		assert.Contains(t, errOut, notAFile, "%v", args)
		assert.Contains(t, errOut, "refusing to change anything that cannot be audited", "%v", args)
	}
	assert.False(t, e.cordoned("cli-audit-bad-1"), "nothing changed")
	if cm, err := e.kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(e.ctx, config.BYOHConfigMap, metav1.GetOptions{}); err == nil {
		assert.NotContains(t, cm.Data, "127.0.0.77", "the BYOH host was not added")
	}
}

// TestDemoRunsNeverWriteTheRealLog: the demo's changes go to a throwaway log, not the user's.
func TestDemoRunsNeverWriteTheRealLog(t *testing.T) {
	state := t.TempDir()
	t.Setenv(actions.AuditEnv, "")
	t.Setenv("XDG_STATE_HOME", state)
	code, _, errOut := runWmcon(t, "--demo", "cordon", "ip-127-0-0-2.ec2.internal")
	require.Equal(t, 0, code, errOut)
	_, err := os.Stat(filepath.Join(state, "wmcon", "audit.log"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the real log was not written")
}

// auditLines reads the audit log's lines, each with its newline.
func auditLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
}

// TestAuditLogThatFillsUp: under a real file-size limit (RLIMIT_FSIZE in a child process, as `ulimit -f` sets
// it; a write past it fails as on a full disk) a change whose intent record cannot be written is refused
// and nothing changes; one whose outcome record cannot be written is made, and the command says so and
// exits 5, leaving the intent whole in the log and no torn line. For a request the Runner runs (cordon) and
// for a command that audits outside it (byoh add).
func TestAuditLogThatFillsUp(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // what else the child writes (client caches) stays out of the real home
	e := newNodeEnv(t, "cli-audit-full")
	byohHas := func(addr string) bool {
		cm, err := e.kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(e.ctx, config.BYOHConfigMap, metav1.GetOptions{})
		return err == nil && cm.Data[addr] != ""
	}
	for _, tc := range []struct {
		name    string
		targets [3]string
		args    func(target string) []string
		changed func(target string) bool
	}{
		{"cordon", [3]string{"cli-full-1", "cli-full-2", "cli-full-3"},
			func(n string) []string { return []string{"cordon", n} }, e.cordoned},
		{"byoh-add", [3]string{"127.0.0.81", "127.0.0.82", "127.0.0.83"},
			func(a string) []string { return []string{"byoh", "add", a, "--user", "Administrator"} }, byohHas},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "cordon" {
				for _, n := range tc.targets {
					e.node(n, false)
				}
			} else {
				t.Cleanup(func() { removeBYOH(e, tc.targets[:]...) })
			}
			run := func(target string, limit int) (code int, stderr, log string) {
				log = filepath.Join(t.TempDir(), "audit.log")
				t.Setenv(actions.AuditEnv, log)
				t.Setenv(fileSizeEnv, "")
				if limit >= 0 {
					t.Setenv(fileSizeEnv, strconv.Itoa(limit))
				}
				c := startChild(t, kubeconfigArgs(t, tc.args(target)...)...)
				code = c.exited(t, 60*time.Second)
				return code, c.stderr.String(), log
			}

			// Unlimited: an intent record and an outcome record, whose sizes place the limit below.
			code, stderr, log := run(tc.targets[0], -1)
			require.Equal(t, 0, code, stderr)
			lines := auditLines(t, log)
			require.Len(t, lines, 2, "intent and outcome")
			assert.Contains(t, lines[0], `"outcome":"intended"`)

			// Room for the intent, not for the outcome: the change is made, and said to be unrecorded.
			code, stderr, log = run(tc.targets[1], len(lines[0])+len(lines[1])/2)
			assert.Equal(t, ExitUnaudited, code, stderr)
			assert.Contains(t, stderr, "the change WAS made but is not recorded")
			assert.Contains(t, stderr, "file too large")
			assert.True(t, tc.changed(tc.targets[1]), "the change was made")
			kept := auditLines(t, log)
			require.Len(t, kept, 1, "the intent alone, and no torn line after it: %q", kept)
			records, err := actions.ReadAudit(log)
			require.NoError(t, err)
			require.Len(t, records, 1)
			assert.Equal(t, actions.Intended, records[0].Outcome, "shown as a run whose outcome is unknown")

			// No room at all (ulimit -f 0): refused before anything changes.
			code, stderr, _ = run(tc.targets[2], 0)
			assert.Equal(t, ExitFailed, code, stderr)
			assert.Contains(t, stderr, "refusing to change anything that cannot be audited")
			assert.Contains(t, stderr, "file too large")
			assert.False(t, tc.changed(tc.targets[2]), "nothing changed")
		})
	}
}

// removeBYOH takes addresses out of windows-instances.
func removeBYOH(e *nodeEnv, addrs ...string) {
	cms := e.kube.CoreV1().ConfigMaps(config.OperatorNamespace)
	cm, err := cms.Get(context.Background(), config.BYOHConfigMap, metav1.GetOptions{})
	if err != nil {
		return
	}
	for _, a := range addrs {
		delete(cm.Data, a)
	}
	_, _ = cms.Update(context.Background(), cm, metav1.UpdateOptions{})
}
