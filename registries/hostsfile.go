package registries

import (
	"bytes"
	"fmt"
	"strings"
)

// file renders the set's hosts.toml. The layout is WMCO's (server, override_path, then one [host."…"] table
// per mirror with its capabilities and an optional header table), CRLF line ends as on any Windows text file.
// The text is written directly because no TOML encoder keeps that layout; every value is a validated host,
// path or base64 string, and the tests parse each file back with go-toml and with containerd's own loader.
func (s *set) file() File {
	f := File{Source: s.source, Dir: DirName(s.source), NeverContactSource: s.never, Mirrors: s.mirrors,
		Server: "https://" + s.source + "/v2"}
	if s.never {
		f.Server = s.mirrors[0].URL // the source is never contacted, even when every mirror fails
	}
	var b bytes.Buffer
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\r\n", a...) }
	line("server = %s", quote(f.Server))
	line("")
	line("override_path = true")
	for _, m := range s.mirrors {
		line("")
		line("[host.%s]", quote(m.URL))
		if m.Resolve {
			line(`  capabilities = ["pull", "resolve"]`)
		} else {
			line(`  capabilities = ["pull"]`)
		}
		line("  override_path = true")
		if m.auth != "" {
			line("  [host.%s.header]", quote(m.URL))
			line("    authorization = %s", quote("Basic "+m.auth))
		}
	}
	f.Content = b.Bytes()
	return f
}

// quote writes a TOML basic string. Inputs are ASCII hosts, paths and base64, so escaping the two characters
// TOML reserves is enough.
func quote(s string) string { return `"` + tomlEscaper.Replace(s) + `"` }

var tomlEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// Masked is the file's text with credentials hidden, for showing on screen.
func (f File) Masked() string {
	lines := strings.Split(string(f.Content), "\r\n")
	for i, l := range lines {
		if k, _, ok := strings.Cut(l, "authorization = "); ok {
			lines[i] = k + `authorization = "Basic ••••••"`
		}
	}
	return strings.Join(lines, "\n")
}
