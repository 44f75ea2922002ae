package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	configclient "github.com/openshift/client-go/config/clientset/versioned"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/payload"
	"github.com/wmcon/wmcon/sim/olm"
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

// auditedOnce reads the records a command added to the audit log at path (those after the first from) and
// checks that each of its runs wrote one intent record, before its outcome records, and at least one
// outcome, with no action and target recorded twice in a run. It returns the outcomes as "action target",
// sorted, and the number of records now in the log.
func auditedOnce(t *testing.T, path string, from int) (outcomes []string, next int) {
	t.Helper()
	all, err := actions.ReadAuditFile(path)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(all), from)
	intents := map[string]int{}
	seen := map[string]bool{}
	ended := map[string]bool{}
	for _, r := range all[from:] {
		require.NotEmpty(t, r.Run, "%s %s names its run", r.Action, r.Node)
		if r.Outcome == actions.Intended {
			intents[r.Run]++
			assert.False(t, ended[r.Run], "run %s: the intent is written before any outcome", r.Run)
			continue
		}
		assert.Equal(t, 1, intents[r.Run], "run %s (%s %s): one intent record before its outcome", r.Run, r.Action, r.Node)
		key := r.Run + " " + r.Action + " " + r.Node
		assert.False(t, seen[key], "%s %s recorded twice", r.Action, r.Node)
		seen[key], ended[r.Run] = true, true
		outcomes = append(outcomes, r.Action+" "+r.Node)
	}
	for run, n := range intents {
		assert.Equal(t, 1, n, "run %s: one intent record", run)
		assert.True(t, ended[run], "run %s: its outcome is recorded", run)
	}
	sort.Strings(outcomes)
	return outcomes, len(all)
}

// auditedCommands are the commands that change a cluster or a host, each with the test that checks its
// audit records with auditedOnce; TestEveryCommandIsClassified holds the command tree to this list and
// readingCommands.
var auditedCommands = map[string]string{
	"cordon": "TestEveryChangeIsAudited", "uncordon": "TestEveryChangeIsAudited", "drain": "TestEveryChangeIsAudited",
	"reboot": "TestEveryChangeIsAudited", "restart-service": "TestEveryChangeIsAudited",
	"triage": "TestEveryChangeIsAudited (--restart)", "mirrors apply": "TestEveryChangeIsAudited",
	"proxy sync": "TestEveryChangeIsAudited", "hostkey forget": "TestEveryChangeIsAudited",
	"key create": "TestEveryChangeIsAudited", "key generate": "TestEveryChangeIsAudited",
	"byoh add": "TestEveryChangeIsAudited", "byoh remove": "TestEveryChangeIsAudited",
	"operator install": "TestEveryChangeIsAudited", "operator uninstall": "TestEveryChangeIsAudited",
	"machineset scale": "TestEveryChangeIsAudited", "machineset delete": "TestEveryChangeIsAudited",
	"upgrade run": "TestEveryChangeIsAudited", "deconfigure": "TestEveryChangeIsAudited",
	"machineset generate": "TestMachineSetGenerateApplyNeverReplacesSilently (--apply)",
	"configure":           "TestConfigureHeadlessEndToEnd",
	"setup":               "TestSetupStandaloneEndToEnd",
}

// readingCommands change nothing (the console, wmcon with no command, changes through the same requests).
var readingCommands = []string{"wmcon", "version", "hostkey list", "doctor", "logs", "top", "top pods", "operator status", "key show",
	"byoh list", "byoh validate", "mirrors status", "mirrors render", "proxy status", "upgrade plan", "config view", "config path"}

// runsItself are the commands with subcommands that also do something of their own: wmcon (the console)
// and top (the nodes' figures; top pods is its subcommand).
var runsItself = map[string]bool{"": true, "top": true}

// TestEveryCommandIsClassified: every command of the command line either changes something, and is in
// auditedCommands with the test that checks its audit records, or only reads: a new command must say which.
func TestEveryCommandIsClassified(t *testing.T) {
	var leaves []string
	var walk func(c *cobra.Command, path string)
	walk = func(c *cobra.Command, path string) {
		if c.Hidden || c.Name() == "help" || path == "completion" { // help and the shell scripts only print
			return
		}
		if c.Runnable() && (!c.HasSubCommands() || runsItself[path]) { // another group only says it needs a subcommand
			leaves = append(leaves, path)
		}
		for _, sub := range c.Commands() {
			walk(sub, strings.TrimSpace(path+" "+sub.Name()))
		}
	}
	root := NewRootCommand(io.Discard, io.Discard, testDemo)
	root.InitDefaultCompletionCmd()
	walk(root, "")
	for i, l := range leaves {
		if l == "" {
			leaves[i] = "wmcon"
		}
	}
	var classified []string
	for c := range auditedCommands {
		classified = append(classified, c)
		assert.NotContains(t, readingCommands, c, "%s is in both lists", c)
	}
	classified = append(classified, readingCommands...)
	assert.ElementsMatch(t, classified, leaves, "each command changes something (auditedCommands) or only reads (readingCommands)")
}

// TestEveryChangeIsAudited: each command that changes a node, a host or the cluster, run against the real
// API server and a simulated host, writes one intent record and one outcome record per node or object,
// naming who acted and on which cluster (API server, context, infrastructure name).
func TestEveryChangeIsAudited(t *testing.T) {
	audit := filepath.Join(t.TempDir(), "audit.log")
	t.Setenv(actions.AuditEnv, audit)
	withInfrastructure(t, "audit-test-x7k2p")
	e := newNodeEnv(t, "cli-audit")
	h := newHeadlessHost(t, e, "cli-audit-win", "127.0.0.63")
	e.node("cli-audit-lin", false)
	h.host.StopService("kubelet") // restart-service starts it
	seedOperatorCatalog(t, e)
	ms := windowsMachineSet(t, e, "cli-audit-ms")
	payloadDir := filepath.Join(t.TempDir(), "payload")
	require.NoError(t, payload.WriteSynthetic(payloadDir, nodeconfig.RequiredPayload("None")))
	keyOut := filepath.Join(t.TempDir(), "generated")
	const byohHost = "127.0.0.64"

	auditedSoFar := 0
	for _, tc := range []struct {
		args   []string
		before func() // makes the change possible
		codes  []int  // the exit codes that say it ran (0 when none are given)
		want   []string
	}{
		{args: []string{"cordon", h.node, "cli-audit-lin"}, want: []string{"cordon cli-audit-lin", "cordon cli-audit-win"}},
		{args: []string{"uncordon", h.node, "cli-audit-lin"}, want: []string{"uncordon cli-audit-lin", "uncordon cli-audit-win"}},
		{args: []string{"drain", "cli-audit-lin"}, want: []string{"drain cli-audit-lin"}},
		{args: []string{"uncordon", "cli-audit-lin"}, want: []string{"uncordon cli-audit-lin"}},
		{args: []string{"restart-service", h.node, "kubelet"}, want: []string{"restart-service cli-audit-win"}}, // pins the host key on first use
		{args: []string{"triage", h.node, "--restart", "kubelet"}, before: func() { h.host.StopService("kubelet") }, codes: []int{0, ExitCheckFailed}, want: []string{"restart-service cli-audit-win"}},
		{args: []string{"mirrors", "apply", h.node}, want: []string{"mirrors-apply cli-audit-win"}}, // a Runner request that once audited itself too: one record, not two
		{args: []string{"proxy", "sync", h.node}, want: []string{"proxy-sync cli-audit-win"}},
		{args: []string{"reboot", h.node, "--down-timeout", "20s", "--up-timeout", "30s", "--ready-timeout", "30s"}, want: []string{"reboot cli-audit-win"}},
		{args: []string{"upgrade", "run", "--payload", payloadDir}, want: []string{"upgrade "}}, // nothing standalone to upgrade: the run's own outcome
		{args: []string{"hostkey", "forget", h.node}, want: []string{"hostkey-forget cli-audit-win"}},
		{args: []string{"key", "create", "--from-file", "../testdata/keys/userdata-test-key"}, want: []string{"key-create " + config.PrivateKeySecret}},
		{args: []string{"key", "generate", "--out", keyOut, "--yes"}, want: []string{"key-create " + config.PrivateKeySecret}},
		{args: []string{"byoh", "add", byohHost, "--user", "Administrator"}, want: []string{"byoh-add " + byohHost}},
		{args: []string{"byoh", "remove", byohHost, "--yes"}, want: []string{"byoh-remove " + byohHost}},
		{args: []string{"operator", "install"}, want: []string{"operator-install " + config.OperatorName}},
		{args: []string{"operator", "uninstall", "--yes"}, want: []string{"operator-uninstall " + config.OperatorName}},
		{args: []string{"machineset", "scale", ms, "0"}, want: []string{"machineset-scale " + ms}},
		{args: []string{"machineset", "delete", ms, "--yes"}, want: []string{"machineset-delete " + ms}},
		{args: []string{"deconfigure", h.node}, want: []string{"deconfigure cli-audit-win"}}, // last: it deletes the node
	} {
		if tc.before != nil {
			tc.before()
		}
		code, out, errOut := runWmcon(t, h.args(t, tc.args...)...)
		require.Contains(t, append(tc.codes, 0), code, "%v\n%s\n%s", tc.args, out, errOut)
		got, n := auditedOnce(t, audit, auditedSoFar)
		auditedSoFar = n
		assert.Equal(t, tc.want, got, "%v: one record per change", tc.args)
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
		if r.Action != "upgrade" && r.Action != "operator-uninstall" {
			assert.NotEmpty(t, r.Steps, "%s %s", r.Action, r.Node)
		}
	}
	sort.Strings(got)
	assert.Subset(t, got, []string{
		"cordon cli-audit-lin", "cordon cli-audit-win",
		"drain cli-audit-lin",
		"hostkey-forget cli-audit-win",
		"mirrors-apply cli-audit-win",
		"restart-service cli-audit-win",
		"uncordon cli-audit-lin", "uncordon cli-audit-lin", "uncordon cli-audit-win",
	})
	fi, err := os.Stat(audit)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// seedOperatorCatalog gives the test server the catalog that offers WMCO (as OLM's would) for operator
// install, and removes it and what the install left (the secrets key create writes too) when the test ends.
func seedOperatorCatalog(t *testing.T, e *nodeEnv) {
	t.Helper()
	c, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	require.NoError(t, olm.New(c, olm.Options{Catalogs: []olm.Catalog{{Name: cluster.DefaultCatalogSource, Channels: []string{"stable"},
		DefaultChannel: "stable", Version: "11.0.1"}}}).Seed(e.ctx))
	t.Cleanup(func() {
		ctx := context.Background()
		for _, o := range []struct {
			res      schema.GroupVersionResource
			ns, name string
		}{
			{cluster.CatalogSourceResource, cluster.MarketplaceNamespace, cluster.DefaultCatalogSource},
			{cluster.PackageManifestResource, cluster.MarketplaceNamespace, config.OperatorName},
			{cluster.OperatorGroupResource, config.OperatorNamespace, config.OperatorName},
			{cluster.SubscriptionResource, config.OperatorNamespace, config.OperatorName},
		} {
			_ = c.Dynamic.Resource(o.res).Namespace(o.ns).Delete(ctx, o.name, metav1.DeleteOptions{})
		}
		_ = e.kube.CoreV1().Secrets(config.OperatorNamespace).Delete(ctx, config.PrivateKeySecret, metav1.DeleteOptions{})
		_ = e.kube.CoreV1().Secrets(config.MachineAPINamespace).Delete(ctx, config.UserDataSecret, metav1.DeleteOptions{})
	})
}

// windowsMachineSet creates a Windows MachineSet of one Machine (no machine API runs to make it), removed
// when the test ends.
func windowsMachineSet(t *testing.T, e *nodeEnv, name string) string {
	t.Helper()
	c, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	sets := c.Machine.MachineV1beta1().MachineSets(config.MachineAPINamespace)
	_, err = sets.Create(e.ctx, &machinev1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: machinev1beta1.MachineSetSpec{Replicas: ptr.To[int32](1), Template: machinev1beta1.MachineTemplateSpec{
			ObjectMeta: machinev1beta1.ObjectMeta{Labels: map[string]string{config.MachineOSIDLabel: config.WindowsOSID}}}}},
		metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sets.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return name
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
