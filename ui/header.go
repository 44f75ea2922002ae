package ui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/layout"
	"github.com/wmcon/wmcon/ui/styles"
)

// headerLines renders the cluster identity (two lines) and the connection banner (third line, blank
// while connected so that nothing moves when the link drops and comes back).
func headerLines(st *styles.Styles, snap *model.Snapshot, now time.Time, width int, readOnly, watchStopped bool) [3]string {
	if snap == nil {
		return [3]string{st.Title.Render("wmcon") + "  " + st.Muted.Render("connecting…"), "", watchBanner(st, watchStopped)}
	}
	c := snap.Cluster
	sep := st.Muted.Render("  ·  ")
	title := st.Title.Render("wmcon")
	if readOnly {
		title += " " + st.Warn.Render("(read-only)")
	}
	first := []string{title, labelled(st, "cluster", orDash(c.Name)),
		labelled(st, "context", orDash(c.Context)), labelled(st, "server", orDash(c.Server))}
	second := []string{versionText(c), wmcoText(st, c, snap.Resources[model.ResCSV]), labelled(st, "platform", orDash(c.Platform))}
	if c.NetworkType != "" {
		second = append(second, labelled(st, "network", c.NetworkType))
	}
	banner := watchBanner(st, watchStopped)
	if banner == "" && !snap.Connection.Connected {
		banner = reconnectBanner(st, snap, now, width)
	}
	if stall, ok := snap.BYOHStall(); ok && banner == "" {
		banner = stallBanner(st, stall, width)
	}
	return [3]string{strings.Join(first, sep), strings.Join(second, sep), banner}
}

func labelled(st *styles.Styles, label, value string) string {
	return st.HeaderKey.Render(label+" ") + st.HeaderText.Render(value)
}

func versionText(c model.ClusterInfo) string {
	if c.OpenShiftVersion != "" {
		return "OpenShift " + c.OpenShiftVersion + " (Kubernetes " + orDash(c.KubernetesVersion) + ")"
	}
	return "Kubernetes " + orDash(c.KubernetesVersion)
}

// wmcoText names the operator's version and CSV phase. Until the CSVs are listed (the watcher lists the
// Nodes first) or when they may not be read, "not installed" would be a guess: it says so instead.
func wmcoText(st *styles.Styles, c model.ClusterInfo, csvs model.ResourceState) string {
	if c.WMCOVersion == "" {
		switch csvs.Availability {
		case model.Syncing:
			return "WMCO …"
		case model.Forbidden:
			return st.Warn.Render("WMCO unknown (CSVs forbidden)")
		}
		return st.Warn.Render("WMCO not installed")
	}
	text := "WMCO " + c.WMCOVersion
	if c.WMCOPhase != "" && c.WMCOPhase != "Succeeded" {
		return st.Warn.Render(text + " (" + c.WMCOPhase + ")")
	}
	if c.WMCOPhase != "" { // the CSV's phase, always: Succeeded is worth seeing too
		text += " (" + c.WMCOPhase + ")"
	}
	return text
}

// reconnectBanner says since when the link is down and why. The server is named when there is room; it
// is on the first header line anyway, and the error is what tells the user what to fix.
func reconnectBanner(st *styles.Styles, snap *model.Snapshot, now time.Time, width int) string {
	conn := snap.Connection
	since := ""
	if !conn.Since.IsZero() {
		since = " since " + conn.Since.Format("15:04:05") + " (" + formatAge(now, conn.Since) + ")"
	}
	reason := ""
	if conn.LastError != "" {
		reason = " — " + conn.LastError
	}
	text := "reconnecting to " + orDash(snap.Cluster.Server) + since + reason
	if layout.TextWidth(text) > width {
		text = "reconnecting" + since + reason
	}
	return st.Banner.Render(text)
}

// stallBanner says loudly that WMCO configures no BYOH host while an entry of windows-instances is wrong,
// naming the entry, its problem and the command that fixes it, as much of it as the width holds.
func stallBanner(st *styles.Styles, s model.BYOHStallInfo, width int) string {
	entry, fix := "an entry", "fix: wmcon byoh list"
	if s.Entry != "" {
		entry, fix = "entry "+strconv.Quote(s.Entry), "fix: "+s.Fix
	}
	more := ""
	if s.More > 0 {
		more = fmt.Sprintf(" (and %d more)", s.More)
	}
	full := fmt.Sprintf("BYOH stalled: WMCO configures none of the %d windows-instances hosts while %s is wrong (%s)%s — %s", s.Hosts, entry, s.Problem, more, fix)
	if layout.TextWidth(full) <= width {
		return st.Banner.Render(full)
	}
	// The problem gives way first (the MachineSets pane lists it in full), then the words around it.
	head, tail := fmt.Sprintf("BYOH stalled: WMCO configures no host while %s is wrong (", entry), ")"+more+" — "+fix
	if room := width - layout.TextWidth(head+tail); room >= 16 {
		return st.Banner.Render(head + layout.Truncate(s.Problem, room, "…") + tail)
	}
	for _, text := range []string{
		fmt.Sprintf("BYOH stalled: %s is wrong%s, so WMCO configures none of the %d hosts — %s", entry, more, s.Hosts, fix),
		fmt.Sprintf("BYOH stalled by %s%s — %s", entry, more, fix),
	} {
		if layout.TextWidth(text) <= width {
			return st.Banner.Render(text)
		}
	}
	return st.Banner.Render(layout.Truncate(fmt.Sprintf("BYOH stalled by %s — %s", entry, fix), width, "…"))
}

func watchBanner(st *styles.Styles, stopped bool) string {
	if !stopped {
		return ""
	}
	return st.Banner.Render("the cluster watch has stopped; data is no longer updated — restart wmcon")
}
