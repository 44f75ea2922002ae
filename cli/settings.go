package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/remote"
)

// The settings of the user's config file, and where each value in effect comes from. Precedence: a flag,
// then the environment variable where there is one (WMCON_AUDIT_LOG), then the file, then the built-in
// default. With --demo the file's cluster settings (SSH, audit log, metrics source) are not used: the demo's
// hosts accept only their own user and key, and it keeps its own audit log.

// Where a setting's value came from.
const (
	fromFlag    = "flag"
	fromEnv     = "env"
	fromFile    = "file"
	fromDefault = "default"
	fromDemo    = "demo"
)

// settingValue is one setting in effect, as `wmcon config view` prints it.
type settingValue struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`         // flag, env, file, default or demo
	From   string `json:"from,omitempty"` // the flag, the variable or the file's path
	Line   int    `json:"line,omitempty"` // the file's line
	Note   string `json:"note,omitempty"` // what an empty default means, or why the demo has its own
}

// settings are the config file's settings in effect for a command.
type settings struct {
	File      string         `json:"file"`
	FileNamed string         `json:"fileNamedBy"` // --config, WMCON_CONFIG or default
	Found     bool           `json:"fileFound"`
	Settings  []settingValue `json:"settings"`
}

// settingSpec says how one setting is given besides the file, and what it is by default.
type settingSpec struct {
	key  string
	flag string // the flag that overrides the file ("" none); a command without it uses the file
	env  string // the variable that overrides the file ("" none)
	// demo: with --demo, the file's value is not used (the demo's own is); demoAlways: not even a flag's.
	demo, demoAlways bool
	def              func(g *globalOptions) (value, note string)
}

var settingSpecs = []settingSpec{
	{key: config.KeySSHUser, flag: "ssh-user", demo: true, def: constant("", "WMCO's user for the platform: Administrator (capi on Azure); a BYOH host's user from windows-instances")},
	{key: config.KeySSHBastion, flag: "ssh-bastion", demo: true, def: constant("", "the cluster's run=ssh-bastion Service, if any")},
	{key: config.KeySSHKey, flag: "ssh-key", demo: true, def: constant("", "the cluster's cloud-private-key secret")},
	{key: config.KeyKnownHosts, flag: "known-hosts", demo: true, def: func(*globalOptions) (string, string) {
		p, err := remote.DefaultKnownHostsPath()
		return p, errNote(err, "used when the cluster cannot store host keys")
	}},
	{key: config.KeyAuditLog, flag: "audit-log", env: actions.AuditEnv, demoAlways: true, def: func(*globalOptions) (string, string) {
		p, err := actions.StateAuditPath()
		return p, errNote(err, "")
	}},
	{key: config.KeyMetricsSource, flag: "prometheus", demo: true, def: constant(config.MetricsAuto, "the cluster's thanos-querier, else each node's windows_exporter through the API server's node proxy")},
	{key: config.KeyMetricsInterval, def: func(g *globalOptions) (string, string) {
		if g.demo {
			return "3s", "the console's refresh of the metrics (30s on a cluster)"
		}
		return "30s", "the console's refresh of the metrics"
	}},
	{key: config.KeyTheme, flag: "theme", def: constant("dark", "")},
}

func constant(value, note string) func(*globalOptions) (string, string) {
	return func(*globalOptions) (string, string) { return value, note }
}

func errNote(err error, note string) string {
	if err != nil {
		return err.Error()
	}
	return note
}

// loadSettings reads the config file and applies its values to what the command uses, where no flag
// (or variable) gave them; it returns every setting in effect and where it came from.
func (g *globalOptions) loadSettings(cmd *cobra.Command, getenv func(string) string) (settings, error) {
	path, namedBy, named, err := config.FilePath(g.configPath, getenv)
	if err != nil {
		return settings{}, usageErrorf("%v", err)
	}
	f, err := config.ReadFile(path, named)
	if err != nil {
		return settings{}, configFileError(err)
	}
	if err := checkBastion(f); err != nil {
		return settings{}, err
	}
	if flag := cmd.Flags().Lookup("theme"); flag != nil && flag.Changed {
		if err := config.CheckTheme(g.theme); err != nil {
			return settings{}, usageErrorf("--theme: %v", err)
		}
	}
	s := settings{File: path, FileNamed: namedBy, Found: f.Found}
	for _, spec := range settingSpecs {
		v := g.resolve(cmd, spec, f, getenv)
		if v.Source == fromFile {
			if err := g.apply(cmd, spec, v.Value); err != nil {
				return settings{}, err
			}
		}
		s.Settings = append(s.Settings, v)
	}
	return s, nil
}

// resolve decides one setting: flag, variable, file or default (or the demo's own).
func (g *globalOptions) resolve(cmd *cobra.Command, spec settingSpec, f config.File, getenv func(string) string) settingValue {
	v := settingValue{Key: spec.key}
	flag := cmd.Flags().Lookup(spec.flag)
	switch fileValue, inFile := f.Value[spec.key]; {
	case g.demo && spec.demoAlways:
		v.Source, v.Note = fromDemo, "the demo's own, removed when it ends"
	case flag != nil && flag.Changed:
		v.Source, v.From, v.Value = fromFlag, "--"+spec.flag, flagText(flag.Value.String())
	case g.demo && spec.demo:
		v.Source, v.Note = fromDemo, "the demo's own hosts and exporters"
		if inFile {
			v.Note += fmt.Sprintf("; the file's %s is used without --demo", fileValue)
		}
	case spec.env != "" && getenv(spec.env) != "":
		v.Source, v.From, v.Value = fromEnv, spec.env, getenv(spec.env)
	case inFile:
		v.Source, v.From, v.Line, v.Value = fromFile, f.Path, f.Line[spec.key], fileValue
	default:
		v.Source = fromDefault
		v.Value, v.Note = spec.def(g)
	}
	return v
}

// flagText is a flag's value as the user wrote it (a list flag's values joined).
func flagText(s string) string {
	return strings.Trim(s, "[]")
}

// apply hands a value from the file to what uses it.
func (g *globalOptions) apply(cmd *cobra.Command, spec settingSpec, value string) error {
	switch spec.key {
	case config.KeySSHUser:
		g.ssh.User = value
	case config.KeySSHBastion:
		g.ssh.Bastion = value
	case config.KeySSHKey:
		g.ssh.Keys = []string{value}
	case config.KeyKnownHosts:
		g.ssh.KnownHosts = value
	case config.KeyAuditLog:
		g.auditLog = value
	case config.KeyMetricsSource:
		// The console's --prometheus and top's own flag of the same name.
		if flag := cmd.Flags().Lookup("prometheus"); flag != nil && value != config.MetricsAuto {
			return flag.Value.Set(value)
		}
	case config.KeyMetricsInterval:
		d, err := time.ParseDuration(value)
		if err != nil {
			return err // checked when the file was read
		}
		g.metricsInterval = d
	case config.KeyTheme:
		g.theme = value
	}
	return nil
}

// checkBastion checks the file's bastion as --ssh-bastion is checked, naming the file and line.
func checkBastion(f config.File) error {
	b, ok := f.Value[config.KeySSHBastion]
	if !ok {
		return nil
	}
	if _, err := remote.ParseJumpSpec(b); err != nil {
		return configFileError(&config.FileError{Path: f.Path, Line: f.Line[config.KeySSHBastion], Key: config.KeySSHBastion,
			Problem: err.Error(), Fix: "write jump hosts as [user@]host[:port][,...], such as core@bastion.example.com"})
	}
	return nil
}

// configFileError is a bad config file as a command line error (exit 64); a file that exists but cannot
// be read is an ordinary failure.
func configFileError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return &usageError{err: err}
}

// skipsSettings are the commands that work without reading the config file: finding the file must work
// when it is broken, and completion, help and version need none of it.
func skipsSettings(cmd *cobra.Command) bool {
	if cmd.Name() == "version" || cmd.Name() == "help" || (cmd.Name() == "path" && cmd.HasParent() && cmd.Parent().Name() == "config") {
		return true
	}
	for c := cmd; c != nil; c = c.Parent() {
		if c.Name() == "completion" || c.Name() == cobra.ShellCompRequestCmd || c.Name() == cobra.ShellCompNoDescRequestCmd {
			return true
		}
	}
	return false
}
