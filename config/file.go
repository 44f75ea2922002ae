package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The user's config file holds the defaults a user would otherwise repeat on every run. Flags override it,
// and it overrides the built-in defaults; it never holds a secret (the SSH key's path only).

// FileEnv names the config file in place of the default location; --config overrides it.
const FileEnv = "WMCON_CONFIG"

// The config file's settings, as dotted keys (ssh.user is `user:` under `ssh:`).
const (
	KeySSHUser         = "ssh.user"
	KeySSHBastion      = "ssh.bastion"
	KeySSHKey          = "ssh.key"
	KeyKnownHosts      = "ssh.knownHosts"
	KeyAuditLog        = "auditLog"
	KeyMetricsSource   = "metrics.source"
	KeyMetricsInterval = "metrics.interval"
	KeyTheme           = "theme"
)

// Themes are the console's looks a user can choose; ui/theme has a palette for each (a test keeps the
// two in step).
var Themes = []string{"dark", "light", "high-contrast"}

// MetricsAuto is the metrics source wmcon picks by itself: the cluster's thanos-querier, else each node's
// windows_exporter through the API server's node proxy.
const MetricsAuto = "auto"

// MinMetricsInterval is the shortest refresh of the console's metrics a user may ask for.
const MinMetricsInterval = time.Second

// settingKind says how a setting's value is checked and normalised.
type settingKind int

const (
	kindName     settingKind = iota // a user or host name: text without spaces
	kindText                        // free text (a bastion's jump list, checked by the command line)
	kindPath                        // a local file: ~ expanded, a relative path resolved against the file's folder
	kindSource                      // auto or a Prometheus URL
	kindInterval                    // a Go duration of at least MinMetricsInterval
	kindTheme                       // one of Themes
)

// SettingKeys are every key of the config file, in the order `wmcon config view` shows them.
var SettingKeys = []string{KeySSHUser, KeySSHBastion, KeySSHKey, KeyKnownHosts, KeyAuditLog, KeyMetricsSource,
	KeyMetricsInterval, KeyTheme}

var settingKinds = map[string]settingKind{
	KeySSHUser: kindName, KeySSHBastion: kindText, KeySSHKey: kindPath, KeyKnownHosts: kindPath,
	KeyAuditLog: kindPath, KeyMetricsSource: kindSource, KeyMetricsInterval: kindInterval, KeyTheme: kindTheme,
}

// File is what a config file sets.
type File struct {
	Path  string            // where it was looked for
	Found bool              // false: there is no file there (nothing is set)
	Value map[string]string // key → value, normalised: paths absolute, intervals as Go durations
	Line  map[string]int    // key → its line in the file
}

// FileError is a config file that cannot be used: it names the file, the key and line where known, what is
// wrong and what to write instead.
type FileError struct {
	Path    string
	Line    int    // 0: not known
	Key     string // "": the whole file
	Problem string
	Fix     string
	Err     error // the reading or parsing error, when there is one
}

func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString("config file " + e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ", line %d", e.Line)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Problem)
	if e.Fix != "" {
		b.WriteString(": " + e.Fix)
	}
	return b.String()
}

func (e *FileError) Unwrap() error { return e.Err }

// FilePath is the config file to read and what named it: the --config flag, $WMCON_CONFIG, or the default
// ($XDG_CONFIG_HOME/wmcon/config.yaml, else ~/.config/wmcon/config.yaml). named is true when the user named
// the file (flag or variable): a named file must exist, the default one need not.
func FilePath(flag string, getenv func(string) string) (path, from string, named bool, err error) {
	switch {
	case flag != "":
		path, from, named = flag, "--config", true
	case getenv(FileEnv) != "":
		path, from, named = getenv(FileEnv), FileEnv, true
	default:
		from = "default"
		if d := getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
			return filepath.Join(d, "wmcon", "config.yaml"), from, false, nil
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return "", from, false, fmt.Errorf("no home directory for the config file (%w): set XDG_CONFIG_HOME or %s, or give --config", err, FileEnv)
		}
		return filepath.Join(home, ".config", "wmcon", "config.yaml"), from, false, nil
	}
	if path, err = expandHome(path); err != nil {
		return "", from, named, fmt.Errorf("%s %s: %w", from, path, err)
	}
	if path, err = filepath.Abs(path); err != nil {
		return "", from, named, fmt.Errorf("%s %s: %w", from, path, err)
	}
	return path, from, named, nil
}

// ReadFile reads the config file at path (absolute). A missing file sets nothing, unless the user named it
// (named); an unreadable or invalid one is a *FileError.
func ReadFile(path string, named bool) (File, error) {
	f := File{Path: path, Value: map[string]string{}, Line: map[string]int{}}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !named:
		return f, nil
	case errors.Is(err, fs.ErrNotExist):
		return f, &FileError{Path: path, Problem: "there is no such file", Fix: "create it, or name an existing file", Err: err}
	case err != nil:
		return f, &FileError{Path: path, Problem: "it cannot be read (" + err.Error() + ")", Fix: "make it readable, or name another file with --config", Err: err}
	}
	f.Found = true
	return f, f.parse(b)
}

func (f *File) parse(b []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil // an empty file sets nothing
	} else if err != nil {
		return &FileError{Path: f.Path, Problem: "it is not valid YAML (" + strings.TrimPrefix(err.Error(), "yaml: ") + ")",
			Fix: "fix the syntax; the README's \"Config file\" section has an example", Err: err}
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return &FileError{Path: f.Path, Line: more.Line, Problem: "it holds more than one YAML document", Fix: "keep one (remove the --- line)"}
	}
	if len(doc.Content) == 0 {
		return nil
	}
	top := doc.Content[0]
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return nil // only comments
	}
	if top.Kind != yaml.MappingNode {
		return &FileError{Path: f.Path, Line: top.Line, Problem: "it is not a map of settings", Fix: "write settings as key: value lines, such as theme: light"}
	}
	return f.mapping(top, "")
}

// mapping reads the settings of a map: under prefix ("ssh.", "metrics.") or at the top.
func (f *File) mapping(n *yaml.Node, prefix string) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := prefix + k.Value
		if line, dup := seen[k.Value]; dup {
			return &FileError{Path: f.Path, Line: k.Line, Key: key, Problem: fmt.Sprintf("it is set twice (also on line %d)", line), Fix: "keep one"}
		}
		seen[k.Value] = k.Line
		if sub, ok := groups[key]; ok {
			if v.Kind != yaml.MappingNode {
				return &FileError{Path: f.Path, Line: v.Line, Key: key, Problem: "it is a group of settings, not a value",
					Fix: "write its settings indented under it: " + strings.Join(sub, ", ")}
			}
			if err := f.mapping(v, key+"."); err != nil {
				return err
			}
			continue
		}
		kind, ok := settingKinds[key]
		if !ok {
			fix := "write one of " + knownUnder(prefix)
			if near := caseOf(key); near != "" {
				fix = "write " + near[len(prefix):] + " (keys are case-sensitive)"
			}
			return &FileError{Path: f.Path, Line: k.Line, Key: key, Problem: "there is no such setting", Fix: fix}
		}
		val, err := f.value(key, kind, v)
		if err != nil {
			return err
		}
		f.Value[key], f.Line[key] = val, k.Line
	}
	return nil
}

// caseOf is the setting key differs from only in case, or "".
func caseOf(key string) string {
	for _, k := range SettingKeys {
		if strings.EqualFold(k, key) {
			return k
		}
	}
	return ""
}

// groups are the maps of settings and the keys each holds.
var groups = map[string][]string{
	"ssh":     {"user", "bastion", "key", "knownHosts"},
	"metrics": {"source", "interval"},
}

// knownUnder lists the keys a map may hold: the top's, or a group's.
func knownUnder(prefix string) string {
	if prefix != "" {
		return strings.Join(groups[strings.TrimSuffix(prefix, ".")], ", ") + " (under " + strings.TrimSuffix(prefix, ".") + ")"
	}
	return "ssh (user, bastion, key, knownHosts), auditLog, metrics (source, interval), theme"
}

// value checks one setting's value and returns it normalised.
func (f *File) value(key string, kind settingKind, v *yaml.Node) (string, error) {
	bad := func(problem, fix string) error {
		return &FileError{Path: f.Path, Line: v.Line, Key: key, Problem: problem, Fix: fix}
	}
	example := examples[kind]
	switch {
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
		return "", bad("it has no value", "write one, such as "+key+": "+example+", or remove the line")
	case v.Kind != yaml.ScalarNode:
		return "", bad("it is a "+nodeKind(v)+", not a single value", "write one value, such as "+example)
	case v.Tag != "!!str" && kind == kindInterval:
		return "", bad(fmt.Sprintf("%s has no unit", v.Value), "write a number with its unit, such as "+v.Value+"s or 2m")
	case v.Tag != "!!str":
		return "", bad(fmt.Sprintf("%s is a %s, not text", v.Value, tagName(v.Tag)), "write it in quotes, or write "+example)
	}
	s := strings.TrimSpace(v.Value)
	if s == "" {
		return "", bad("it is empty", "write a value, such as "+example+", or remove the line")
	}
	val, problem, fix := checkValue(kind, s, filepath.Dir(f.Path))
	if problem != "" {
		return "", bad(problem, fix)
	}
	return val, nil
}

// examples are what a setting of each kind looks like, for the messages.
var examples = map[settingKind]string{
	kindName: "Administrator", kindText: "core@bastion.example.com", kindPath: "~/.ssh/wmcon_windows_ed25519",
	kindSource: "auto or https://thanos-querier.example.com", kindInterval: "30s", kindTheme: strings.Join(Themes, ", "),
}

// tagName names a YAML scalar's type for the user.
func tagName(tag string) string {
	switch tag {
	case "!!int", "!!float":
		return "number"
	case "!!bool":
		return "true/false value"
	}
	return strings.TrimPrefix(tag, "!!") + " value"
}

func nodeKind(v *yaml.Node) string {
	switch v.Kind {
	case yaml.MappingNode:
		return "map"
	case yaml.SequenceNode:
		return "list"
	}
	return "alias"
}

// checkValue checks s as a value of kind; dir is the folder relative paths are resolved against. It returns
// the normalised value, or the problem and what to write instead.
func checkValue(kind settingKind, s, dir string) (val, problem, fix string) {
	switch kind {
	case kindName:
		if strings.ContainsAny(s, " \t") {
			return "", fmt.Sprintf("%q has a space", s), "write the name alone, such as Administrator"
		}
	case kindPath:
		return checkPath(s, dir)
	case kindSource:
		return checkSource(s)
	case kindInterval:
		d, err := time.ParseDuration(s)
		if err != nil {
			return "", fmt.Sprintf("%q is not a duration", s), "write a number with its unit, such as 30s or 2m"
		}
		if d < MinMetricsInterval {
			return "", fmt.Sprintf("%s is shorter than %s", d, MinMetricsInterval), "write 1s or more, such as 30s"
		}
		return d.String(), "", ""
	case kindTheme:
		if err := CheckTheme(s); err != nil {
			return "", fmt.Sprintf("%q is not a theme", s), "write one of " + strings.Join(Themes, ", ")
		}
	}
	return s, "", ""
}

// checkPath expands ~ and resolves a relative path against dir (as kubeconfig does with its files). A key
// itself in place of its path is refused: the file never holds a secret.
func checkPath(s, dir string) (val, problem, fix string) {
	if strings.Contains(s, "-----BEGIN") || strings.Contains(s, "\n") {
		return "", "this looks like a key itself, not a file's path", "write the path of the key file; the config file never holds a secret"
	}
	p, err := expandHome(s)
	if err != nil {
		return "", err.Error(), "write ~/…, an absolute path, or a path relative to the config file's folder"
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p), "", ""
}

// checkSource accepts auto or an http(s) URL with a host.
func checkSource(s string) (val, problem, fix string) {
	if s == MetricsAuto {
		return s, "", ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Sprintf("%q is neither auto nor a Prometheus URL", s), "write auto, or the http(s) URL of a Prometheus or Thanos querier, such as https://thanos-querier.example.com"
	}
	return s, "", ""
}

// CheckTheme refuses a theme that is not one of Themes, naming them.
func CheckTheme(name string) error {
	for _, t := range Themes {
		if t == name {
			return nil
		}
	}
	return fmt.Errorf("there is no theme %q: use one of %s", name, strings.Join(Themes, ", "))
}

// CheckMetricsSource refuses a metrics source that is neither auto nor an http(s) URL.
func CheckMetricsSource(s string) error {
	if _, problem, fix := checkSource(s); problem != "" {
		return fmt.Errorf("%s: %s", problem, fix)
	}
	return nil
}

// expandHome expands a leading ~ or ~/; ~user is refused (it is not expanded by wmcon).
func expandHome(p string) (string, error) {
	if !strings.HasPrefix(p, "~") {
		return p, nil
	}
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return "", fmt.Errorf("%q: only ~ alone or ~/ is expanded", p)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("%q: no home directory to expand ~ (%v)", p, err)
	}
	return filepath.Join(home, strings.TrimPrefix(p, "~")), nil
}
