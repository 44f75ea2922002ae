package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/windows"
	"github.com/wmcon/wmcon/ui"
)

// writeConfig writes a config file into a fresh folder and returns its path.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	return p
}

// viewSettings runs config view -o json with args and returns the settings by key.
func viewSettings(t *testing.T, args ...string) (settings, map[string]settingValue) {
	t.Helper()
	code, out, errOut := runWmcon(t, append(args, "config", "view", "-o", "json")...)
	require.Equal(t, 0, code, errOut)
	var s settings
	require.NoError(t, json.Unmarshal([]byte(out), &s), out)
	byKey := map[string]settingValue{}
	for _, v := range s.Settings {
		byKey[v.Key] = v
	}
	return s, byKey
}

// TestConfigViewSaysWhereEachValueCameFrom: a flag beats the file, the variable beats the file, the file beats
// the defaults, and config view names each source (the file with its line) — with no cluster at all.
func TestConfigViewSaysWhereEachValueCameFrom(t *testing.T) {
	path := writeConfig(t, `ssh:
  user: file-user
  key: keys/windows_ed25519
auditLog: /srv/wmcon/file-audit.log
metrics:
  interval: 45s
theme: light
`)
	t.Setenv(actions.AuditEnv, "/srv/wmcon/env-audit.log")
	s, v := viewSettings(t, "--config", path, "--ssh-user", "flag-user")
	assert.Equal(t, path, s.File)
	assert.Equal(t, "--config", s.FileNamed)
	assert.True(t, s.Found)
	assert.Len(t, s.Settings, len(config.SettingKeys), "every setting is shown")

	assert.Equal(t, settingValue{Key: config.KeySSHUser, Value: "flag-user", Source: fromFlag, From: "--ssh-user"}, v[config.KeySSHUser])
	assert.Equal(t, settingValue{Key: config.KeyAuditLog, Value: "/srv/wmcon/env-audit.log", Source: fromEnv, From: actions.AuditEnv}, v[config.KeyAuditLog])
	assert.Equal(t, settingValue{Key: config.KeySSHKey, Value: filepath.Join(filepath.Dir(path), "keys", "windows_ed25519"), Source: fromFile, From: path, Line: 3},
		v[config.KeySSHKey], "a relative path is resolved against the file's folder")
	assert.Equal(t, settingValue{Key: config.KeyMetricsInterval, Value: "45s", Source: fromFile, From: path, Line: 6}, v[config.KeyMetricsInterval])
	assert.Equal(t, settingValue{Key: config.KeyTheme, Value: "light", Source: fromFile, From: path, Line: 7}, v[config.KeyTheme])
	assert.Equal(t, fromDefault, v[config.KeySSHBastion].Source)
	assert.Equal(t, config.MetricsAuto, v[config.KeyMetricsSource].Value)

	// Without the variable the file's audit log is in effect; the text form names the file and line.
	t.Setenv(actions.AuditEnv, "")
	code, out, errOut := runWmcon(t, "--config", path, "config", "view")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "config file: "+path+" (read; named by --config)")
	assert.Regexp(t, `auditLog +/srv/wmcon/file-audit.log +`+regexp.QuoteMeta(path)+`:4`, out)
	assert.Regexp(t, `ssh.bastion +- +default \(the cluster's run=ssh-bastion Service, if any\)`, out)

	// WMCON_CONFIG names the file when --config does not; YAML shows the same.
	t.Setenv(config.FileEnv, path)
	code, out, errOut = runWmcon(t, "config", "view", "-o", "yaml")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "fileNamedBy: "+config.FileEnv)
	assert.Contains(t, out, "value: file-user")
}

// TestConfigViewWithTheDemo: the demo keeps its own hosts, exporters and audit log, so the file's cluster
// settings are not used with --demo (and config view says so), while its look is.
func TestConfigViewWithTheDemo(t *testing.T) {
	path := writeConfig(t, "ssh:\n  user: core\nauditLog: /srv/wmcon/audit.log\ntheme: high-contrast\n")
	_, v := viewSettings(t, "--demo", "--config", path)
	assert.Equal(t, fromDemo, v[config.KeySSHUser].Source)
	assert.Contains(t, v[config.KeySSHUser].Note, "the file's core is used without --demo")
	assert.Equal(t, fromDemo, v[config.KeyAuditLog].Source)
	assert.Equal(t, fromFile, v[config.KeyTheme].Source)
	assert.Equal(t, "3s", v[config.KeyMetricsInterval].Value, "the demo's own refresh, as a default")
}

// TestConfigViewWithoutAFile: no file at the default place is no error; every value is a default.
func TestConfigViewWithoutAFile(t *testing.T) {
	t.Setenv(actions.AuditEnv, "") // TestMain's
	s, v := viewSettings(t)
	assert.False(t, s.Found)
	assert.Equal(t, "default", s.FileNamed)
	assert.Equal(t, filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "wmcon", "config.yaml"), s.File)
	for _, key := range config.SettingKeys {
		assert.Equal(t, fromDefault, v[key].Source, key)
	}
	assert.Equal(t, "dark", v[config.KeyTheme].Value)

	code, out, _ := runWmcon(t, "config", "path")
	assert.Equal(t, 0, code)
	assert.Equal(t, s.File+"\n", out)
}

// TestBadConfigFileIsAUsageError: a bad file stops every command with exit 64 and the file's, key's and
// line's names; config path still finds it; a named file that is not there is refused.
func TestBadConfigFileIsAUsageError(t *testing.T) {
	path := writeConfig(t, "theme: light\nmetrics:\n  interval: 10ms\n")
	for _, args := range [][]string{{"config", "view"}, {"cordon", "some-node"}, {}} {
		code, _, errOut := runWmcon(t, append([]string{"--config", path}, args...)...)
		assert.Equal(t, ExitUsage, code, "%v: %s", args, errOut)
		assert.Contains(t, errOut, "config file "+path+", line 3: metrics.interval: 10ms is shorter than 1s: write 1s or more", args)
	}
	code, out, _ := runWmcon(t, "--config", path, "config", "path")
	assert.Equal(t, 0, code)
	assert.Equal(t, path+"\n", out)

	missing := filepath.Join(t.TempDir(), "nope.yaml")
	code, _, errOut := runWmcon(t, "--config", missing, "config", "view")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, "config file "+missing+": there is no such file")

	bastion := writeConfig(t, "ssh:\n  bastion: core@\n")
	code, _, errOut = runWmcon(t, "--config", bastion, "config", "view")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, "config file "+bastion+", line 2: ssh.bastion: ")
	assert.Contains(t, errOut, "write jump hosts as [user@]host[:port][,...]")

	dir := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.Mkdir(dir, 0o700))
	code, _, errOut = runWmcon(t, "--config", dir, "config", "view")
	assert.Equal(t, ExitFailed, code, "a file that cannot be read is a failure, not a usage error")
	assert.Contains(t, errOut, "config file "+dir+": it cannot be read")
}

// TestUnknownThemeIsRefused: --theme and the file's theme name the themes there are.
func TestUnknownThemeIsRefused(t *testing.T) {
	code, _, errOut := runWmcon(t, "--theme", "solarized")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, `--theme: there is no theme "solarized": use one of dark, light, high-contrast`)

	path := writeConfig(t, "theme: solarized\n")
	code, _, errOut = runWmcon(t, "--config", path)
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, errOut, `config file `+path+`, line 1: theme: "solarized" is not a theme: write one of dark, light, high-contrast`)
}

// TestConfigFileSettingsReachTheConsole: the theme and the metrics refresh of the file are what the console
// is opened with (on the demo), and a flag's theme wins over the file's.
func TestConfigFileSettingsReachTheConsole(t *testing.T) {
	path := writeConfig(t, "theme: high-contrast\nmetrics:\n  interval: 7s\n")
	opened := func(args ...string) ui.Options {
		t.Helper()
		g := &globalOptions{kube: genericclioptions.NewConfigFlags(true), demoCluster: testDemo, stdout: io.Discard, stderr: io.Discard}
		root := newRootCommand(g)
		var opts ui.Options
		root.RunE = func(cmd *cobra.Command, _ []string) error { // the console, without a terminal to draw on
			s, o, err := openConsole(cmd.Context(), g)
			if err == nil {
				s.Close()
			}
			opts = o
			return err
		}
		root.SetArgs(append([]string{"--demo", "--config", path}, args...))
		require.NoError(t, root.ExecuteContext(context.Background()))
		return opts
	}
	opts := opened()
	assert.Equal(t, "high-contrast", opts.Theme)
	assert.Equal(t, 7*time.Second, opts.MetricsInterval)
	assert.Equal(t, 7*time.Second, opts.PodMetricsInterval)

	opts = opened("--theme", "light")
	assert.Equal(t, "light", opts.Theme, "the flag wins over the file")
}

// TestConfigFileSSHUserReachesTheHost: the file's SSH user, key and known-hosts are what a configure
// --dry-run logs in to a host with: the host accepts only that user, so the dry run succeeds only with the
// file's values; a --ssh-user flag overrides the file (and the host then refuses, naming the flag's user).
func TestConfigFileSSHUserReachesTheHost(t *testing.T) {
	b := newBareHosts(t)
	const ip = "127.0.0.83"
	b.startOpts("win-cfgfile", ip, windows.Options{User: "wmcon-file-user"})
	path := writeConfig(t, "ssh:\n  user: wmcon-file-user\n  key: "+b.keyFile+"\n  knownHosts: "+b.knownHosts+"\n")
	base := []string{"--config", path, "--kubeconfig", srv.AdminKubeconfig(), "--ssh-config", b.sshConfig, "--ssh-agent=false",
		"configure", "--address", ip, "--payload", b.payloadDir, "--dry-run"}

	code, out, errOut := runWmcon(t, base...)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	assert.Contains(t, out, "create kubelet", "the dry run read the host as the file's user and planned its configuration")

	code, out, errOut = runWmcon(t, append([]string{"--ssh-user", "flag-user"}, base...)...)
	assert.NotEqual(t, 0, code, out)
	assert.Contains(t, out+errOut, "flag-user", "the flag's user is the one the host refused")
}

// TestConfigFileAuditLogIsWrittenTo: a change is recorded in the file's audit log when no flag or variable
// names another.
func TestConfigFileAuditLogIsWrittenTo(t *testing.T) {
	e := newNodeEnv(t, "cli-cfg-audit")
	e.node("cli-cfg-audit-1", true)
	log := filepath.Join(t.TempDir(), "from-the-file.log")
	path := writeConfig(t, "auditLog: "+log+"\n")
	t.Setenv(actions.AuditEnv, "")

	code, _, errOut := runWmcon(t, append([]string{"--config", path}, kubeconfigArgs(t, "cordon", "cli-cfg-audit-1")...)...)
	require.Equal(t, 0, code, errOut)
	outcomes, _ := auditedOnce(t, log, 0)
	assert.Equal(t, []string{"cordon cli-cfg-audit-1"}, outcomes)

	// The variable overrides the file.
	env := filepath.Join(t.TempDir(), "from-the-env.log")
	t.Setenv(actions.AuditEnv, env)
	code, _, errOut = runWmcon(t, append([]string{"--config", path}, kubeconfigArgs(t, "uncordon", "cli-cfg-audit-1")...)...)
	require.Equal(t, 0, code, errOut)
	outcomes, _ = auditedOnce(t, env, 0)
	assert.Equal(t, []string{"uncordon cli-cfg-audit-1"}, outcomes)
	records, err := actions.ReadAuditFile(log)
	require.NoError(t, err)
	assert.Len(t, records, 2, "the file's log has the cordon's intent and outcome only")
}
