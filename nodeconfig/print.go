package nodeconfig

import (
	"fmt"
	"io"
	"strings"

	"github.com/wmcon/wmcon/model"
)

// AfterHost are the cluster-side steps every configuration runs once the host matches its plan; the
// dry run lists them so the whole procedure is visible.
var AfterHost = []string{
	"wait for the kubelet's client CSR (requester = the bootstrap identity, subject system:node:NAME) and approve it",
	"wait for the Node to register",
	"wait for the kubelet's serving CSR (requester system:node:NAME, every SAN an address or name of this host) and approve it",
	"label and annotate the Node (worker role, byoh when BYOH, pub-key-hash, pinned SSH host key, version)",
	"uncordon the Node and wait for it to be Ready",
}

// Write prints the plan for --dry-run: every directory, file (size and SHA-256; never the content of a
// secret file) and service command line it would apply.
func (p Plan) Write(w io.Writer) error {
	pw := &planWriter{w: w}
	pw.line("plan for %s (%s)", p.Host.NodeName, p.Host.IP)
	if p.Empty() {
		pw.line("  the host is configured: %d directories, %d files and %d services already match, nothing to change",
			p.UpToDate.Dirs, p.UpToDate.Files, p.UpToDate.Services)
	} else {
		pw.changes(p)
	}
	pw.line("  then")
	for _, s := range AfterHost {
		pw.line("    %s", strings.ReplaceAll(s, "NAME", p.Host.NodeName))
	}
	return pw.err
}

func (pw *planWriter) changes(p Plan) {
	pw.section("directories", len(p.MakeDirs), p.UpToDate.Dirs, "present")
	for _, d := range p.MakeDirs {
		pw.line("    create %s", d)
	}
	pw.files("payload", p.Payload)
	pw.files("configuration", p.Config)
	for _, r := range p.RemoveRegistry {
		pw.line("    remove %s (no longer a mirrored registry)", r)
	}
	if len(p.Env) > 0 {
		pw.line("  machine environment (services see it after a reboot)")
		for _, e := range p.Env {
			if e.Value == "" {
				pw.line("    remove %s", e.Name)
			} else {
				pw.line("    set %s=%s", e.Name, model.RedactURL(e.Value))
			}
		}
	}
	pw.services(p)
}

type planWriter struct {
	w   io.Writer
	err error
}

func (pw *planWriter) line(format string, args ...any) {
	if pw.err == nil {
		_, pw.err = fmt.Fprintf(pw.w, format+"\n", args...)
	}
}

func (pw *planWriter) section(name string, change, same int, sameWord string) {
	pw.line("  %s: %d to change, %d %s", name, change, same, sameWord)
}

func (pw *planWriter) files(name string, fs []File) {
	var total int64
	for _, f := range fs {
		total += f.Size
	}
	pw.line("  %s: %d files to write (%s)", name, len(fs), HumanBytes(total))
	for _, f := range fs {
		note := ""
		if f.Secret {
			note = "  (holds credentials: content not shown)"
		}
		pw.line("    write %s  %s  sha256:%s%s", f.Path, HumanBytes(f.Size), f.SHA256, note)
	}
}

func (pw *planWriter) services(p Plan) {
	pw.line("  services: %d to create, %d to start, %d running as wanted", len(p.Create), len(p.Start), p.UpToDate.Services)
	for _, s := range p.Stop {
		pw.line("    stop %s", s)
	}
	for _, s := range p.Recreate {
		pw.line("    delete %s (installed with another command line)", s)
	}
	for _, s := range p.Create {
		deps := "-"
		if len(s.DependsOn) > 0 {
			deps = strings.Join(s.DependsOn, ",")
		}
		when := ""
		if s.AfterJoin {
			when = ", started once the node has joined"
		}
		pw.line("    create %s (start order %d, depends on %s, restart on failure after 10/30/60/120 s%s)", s.Name, s.StartOrder, deps, when)
		pw.line("      %s", s.BinPath)
		for _, ps := range s.PreScripts {
			pw.line("      first its pre-script: %s", ps)
		}
		if s.Pending != "" {
			pw.line("      (not yet WMCO's command line: %s)", s.Pending)
		}
	}
	if len(p.Start) > 0 {
		pw.line("    start %s", strings.Join(p.Start, ", "))
	}
}

// HumanBytes formats a size with a binary unit: 512 B, 1.5 KiB, 45.0 MiB.
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
