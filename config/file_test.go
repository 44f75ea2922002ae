package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/config"
)

// writeFile writes a config file into a fresh folder and returns its path.
func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	return p
}

func TestReadFileNormalisesEverySetting(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	p := writeFile(t, `# defaults for every run
ssh:
  user: core
  bastion: core@bastion.example.com
  key: ~/.ssh/wmcon_windows_ed25519
  knownHosts: pins/known_hosts
auditLog: /var/log/wmcon/audit.log
metrics:
  source: https://thanos-querier.example.com
  interval: 1m30s
theme: high-contrast
`)
	f, err := config.ReadFile(p, true)
	require.NoError(t, err)
	assert.True(t, f.Found)
	assert.Equal(t, map[string]string{
		config.KeySSHUser:         "core",
		config.KeySSHBastion:      "core@bastion.example.com",
		config.KeySSHKey:          filepath.Join(home, ".ssh", "wmcon_windows_ed25519"),
		config.KeyKnownHosts:      filepath.Join(filepath.Dir(p), "pins", "known_hosts"), // relative: against the file's folder
		config.KeyAuditLog:        "/var/log/wmcon/audit.log",
		config.KeyMetricsSource:   "https://thanos-querier.example.com",
		config.KeyMetricsInterval: "1m30s",
		config.KeyTheme:           "high-contrast",
	}, f.Value)
	assert.Equal(t, 3, f.Line[config.KeySSHUser])
	assert.Equal(t, 11, f.Line[config.KeyTheme])
	assert.Len(t, config.SettingKeys, len(f.Value), "every key of the file is a setting config view shows")
}

func TestReadFileMissingEmptyAndUnreadable(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "config.yaml")
	f, err := config.ReadFile(missing, false)
	require.NoError(t, err, "a missing file at the default place is fine")
	assert.False(t, f.Found)
	assert.Empty(t, f.Value)

	_, err = config.ReadFile(missing, true)
	var fe *config.FileError
	require.ErrorAs(t, err, &fe, "a file the user named must exist")
	assert.Contains(t, err.Error(), "config file "+missing+": there is no such file")

	for _, text := range []string{"", "# nothing yet\n", "---\n"} {
		f, err = config.ReadFile(writeFile(t, text), true)
		require.NoError(t, err, "%q", text)
		assert.True(t, f.Found)
		assert.Empty(t, f.Value)
	}

	if os.Geteuid() == 0 {
		t.Skip("root reads any file: the unreadable case cannot be made")
	}
	p := writeFile(t, "theme: light\n")
	require.NoError(t, os.Chmod(p, 0))
	_, err = config.ReadFile(p, false)
	require.ErrorAs(t, err, &fe)
	assert.Contains(t, err.Error(), "config file "+p+": it cannot be read")
	assert.ErrorIs(t, err, os.ErrPermission)
}

// TestReadFileUnreadableDirectory covers the unreadable case as root too: a folder where the file should be.
func TestReadFileUnreadableDirectory(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.Mkdir(p, 0o700))
	_, err := config.ReadFile(p, false)
	var fe *config.FileError
	require.ErrorAs(t, err, &fe, "a file that exists but cannot be read is an error, even at the default place")
	assert.Contains(t, err.Error(), "config file "+p+": it cannot be read")
}

// TestReadFileErrors: each mistake names the file, the line, the key, what is wrong and what to write.
func TestReadFileErrors(t *testing.T) {
	cases := []struct {
		name, text, want string
	}{
		{"unknown key", "them: light\n", `line 1: them: there is no such setting: write one of ssh (user, bastion, key, knownHosts), auditLog, metrics (source, interval), theme`},
		{"a key in the wrong case", "ssh:\n  knownhosts: pins\n", `line 2: ssh.knownhosts: there is no such setting: write knownHosts (keys are case-sensitive)`},
		{"unknown key in a group", "ssh:\n  usr: core\n", `line 2: ssh.usr: there is no such setting: write one of user, bastion, key, knownHosts (under ssh)`},
		{"unknown theme", "theme: solarized\n", `line 1: theme: "solarized" is not a theme: write one of dark, light, high-contrast`},
		{"not a URL", "metrics:\n  source: thanos-querier:9091\n", `line 2: metrics.source: "thanos-querier:9091" is neither auto nor a Prometheus URL: write auto, or the http(s) URL`},
		{"interval too short", "metrics:\n  interval: 500ms\n", `line 2: metrics.interval: 500ms is shorter than 1s: write 1s or more`},
		{"interval not a duration", "metrics:\n  interval: often\n", `line 2: metrics.interval: "often" is not a duration: write a number with its unit`},
		{"interval without unit", "metrics:\n  interval: 30\n", `line 2: metrics.interval: 30 has no unit: write a number with its unit, such as 30s or 2m`},
		{"wrong type", "ssh:\n  user: 42\n", `line 2: ssh.user: 42 is a number, not text: write it in quotes, or write Administrator`},
		{"a list", "ssh:\n  key: [a, b]\n", `line 2: ssh.key: it is a list, not a single value: write one value`},
		{"a group as a value", "ssh: core\n", `line 1: ssh: it is a group of settings, not a value: write its settings indented under it: user, bastion, key, knownHosts`},
		{"no value", "theme:\n", `line 1: theme: it has no value: write one, such as theme: dark, light, high-contrast, or remove the line`},
		{"set twice", "theme: dark\ntheme: light\n", `line 2: theme: it is set twice (also on line 1): keep one`},
		{"a space in a name", "ssh:\n  user: \"Domain Admin\"\n", `line 2: ssh.user: "Domain Admin" has a space`},
		{"a key in place of its path", "ssh:\n  key: \"-----BEGIN OPENSSH PRIVATE KEY-----\\nb3Bl\"\n", `ssh.key: this looks like a key itself, not a file's path: write the path of the key file; the config file never holds a secret`},
		{"another user's home", "auditLog: ~bob/audit.log\n", `line 1: auditLog: "~bob/audit.log": only ~ alone or ~/ is expanded`},
		{"not a map", "- theme\n", `line 1: it is not a map of settings: write settings as key: value lines`},
		{"bad YAML", "theme: [dark\n", `it is not valid YAML`},
		{"two documents", "theme: dark\n---\ntheme: light\n", `it holds more than one YAML document: keep one`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeFile(t, c.text)
			_, err := config.ReadFile(p, false)
			var fe *config.FileError
			require.True(t, errors.As(err, &fe), "%v", err)
			assert.Contains(t, err.Error(), "config file "+p)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestFilePathPrecedence(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

	p, from, named, err := config.FilePath("", env(nil))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(home, ".config", "wmcon", "config.yaml"), p)
	assert.Equal(t, "default", from)
	assert.False(t, named)

	p, _, named, err = config.FilePath("", env(map[string]string{"XDG_CONFIG_HOME": "/etc/xdg-user"}))
	require.NoError(t, err)
	assert.Equal(t, "/etc/xdg-user/wmcon/config.yaml", p)
	assert.False(t, named)

	p, _, _, err = config.FilePath("", env(map[string]string{"XDG_CONFIG_HOME": "relative"}))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(home, ".config", "wmcon", "config.yaml"), p, "a relative XDG_CONFIG_HOME is ignored, as the spec says")

	p, from, named, err = config.FilePath("", env(map[string]string{config.FileEnv: "~/wmcon.yaml", "XDG_CONFIG_HOME": "/etc/xdg-user"}))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(home, "wmcon.yaml"), p)
	assert.Equal(t, config.FileEnv, from)
	assert.True(t, named)

	p, from, named, err = config.FilePath("/srv/wmcon.yaml", env(map[string]string{config.FileEnv: "~/wmcon.yaml"}))
	require.NoError(t, err)
	assert.Equal(t, "/srv/wmcon.yaml", p, "--config wins over WMCON_CONFIG")
	assert.Equal(t, "--config", from)
	assert.True(t, named)
}

func TestCheckTheme(t *testing.T) {
	for _, name := range config.Themes {
		assert.NoError(t, config.CheckTheme(name))
	}
	assert.EqualError(t, config.CheckTheme("Dark"), `there is no theme "Dark": use one of dark, light, high-contrast`)
}

func TestCheckMetricsSource(t *testing.T) {
	assert.NoError(t, config.CheckMetricsSource("auto"))
	assert.NoError(t, config.CheckMetricsSource("http://127.0.0.1:9090"))
	assert.ErrorContains(t, config.CheckMetricsSource("ftp://127.0.0.1"), "neither auto nor a Prometheus URL")
}

// TestREADMEExampleIsAValidFile: the README's example config file is read without an error and sets every
// setting there is, so the example cannot drift from what wmcon accepts.
func TestREADMEExampleIsAValidFile(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(b), "### Config file")
	require.True(t, ok, "the README has a Config file section")
	_, block, ok := strings.Cut(after, "```yaml\n")
	require.True(t, ok, "with a YAML example")
	block, _, _ = strings.Cut(block, "```")
	t.Setenv("HOME", t.TempDir())
	f, err := config.ReadFile(writeFile(t, block), true)
	require.NoError(t, err)
	for _, key := range config.SettingKeys {
		assert.Contains(t, f.Value, key, "the example shows %s", key)
	}
}
