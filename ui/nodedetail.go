package ui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/page"
)

// The node details' sections beyond the snapshot's conditions and labels: resources, the pods on the node
// and its recent events, as `oc describe node` shows them.

// nodeResources lists capacity beside allocatable, one resource a line (cpu, memory, pods first).
func nodeResources(d *page.Writer, n *model.NodeInfo) {
	d.Section("Resources")
	if len(n.Capacity) == 0 && len(n.Allocatable) == 0 {
		d.Line(d.Styles.Muted.Render("(none reported)"))
		return
	}
	names := map[string]bool{}
	for k := range n.Capacity {
		names[k] = true
	}
	for k := range n.Allocatable {
		names[k] = true
	}
	order := []string{"cpu", "memory", "pods", "ephemeral-storage"}
	var rest []string
	for k := range names {
		if !contains(order, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	d.Line(d.Styles.DetailKey.Render(fmt.Sprintf("%-20s %-12s %s", "RESOURCE", "CAPACITY", "ALLOCATABLE")))
	for _, k := range append(order, rest...) {
		if names[k] {
			d.Line(fmt.Sprintf("%-20s %-12s %s", k, orDash(n.Capacity[k]), orDash(n.Allocatable[k])))
		}
	}
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// nodePods lists the pods on the node, a pod that is not running and ready in the warning tone.
func nodePods(d *page.Writer, x nodeExtras, env rowEnv) {
	if x.detail == nil {
		d.Section("Pods")
		d.Line(d.Styles.Muted.Render(extrasState(x)))
		return
	}
	pods := x.detail.Pods
	d.Section(fmt.Sprintf("Pods (%d)", len(pods)))
	switch {
	case x.detail.PodsErr != "":
		d.Line(d.Styles.Bad.Render("cannot list them: " + x.detail.PodsErr))
		return
	case len(pods) == 0:
		d.Line(d.Styles.Muted.Render("(none)"))
		return
	}
	nameW := 0
	for _, p := range pods {
		nameW = max(nameW, len(p.Namespace)+1+len(p.Name))
	}
	nameW = min(nameW, 60)
	d.Line(d.Styles.DetailKey.Render(fmt.Sprintf("%-*s  %-5s  %-18s  %-8s  %-4s  %s", nameW, "NAMESPACE/NAME", "READY", "STATUS", "RESTARTS", "AGE", "OWNER")))
	for _, p := range pods {
		status := p.Phase
		if p.Reason != "" {
			status = p.Reason
		}
		line := fmt.Sprintf("%-*s  %-5s  %-18s  %-8d  %-4s  %s", nameW, shorten(p.Namespace+"/"+p.Name, nameW),
			fmt.Sprintf("%d/%d", p.Ready, p.Total), shorten(status, 18), p.Restarts, formatAge(env.Now, p.Created), orDash(p.Owner))
		if healthyPod(p) {
			d.Line(line)
		} else {
			d.Line(d.Styles.Warn.Render(line))
		}
	}
}

// healthyPod: running with every container ready, or completed.
func healthyPod(p model.PodInfo) bool {
	return p.Phase == "Succeeded" || p.Phase == "Running" && p.Ready == p.Total && p.Reason == ""
}

// nodeEvents lists the node's and its Machine's recent events, newest first, warnings in the warning tone.
func nodeEvents(d *page.Writer, x nodeExtras, env rowEnv) {
	d.Section("Events")
	switch {
	case x.detail == nil:
		d.Line(d.Styles.Muted.Render(extrasState(x)))
		return
	case x.detail.EventsErr != "":
		d.Line(d.Styles.Bad.Render("cannot list them: " + x.detail.EventsErr))
		return
	case len(x.detail.Events) == 0:
		d.Line(d.Styles.Muted.Render("(none recent)"))
		return
	}
	for _, e := range x.detail.Events {
		line := fmt.Sprintf("%-4s  %-7s  %-22s  %s", formatAge(env.Now, e.Time), e.Type, e.Reason, oneLine(e.Message))
		if !strings.HasPrefix(e.Object, "Node/") {
			line += "  (" + e.Object + ")"
		}
		if e.Count > 1 {
			line += fmt.Sprintf("  (%d times)", e.Count)
		}
		if e.Type == "Warning" {
			d.Line(d.Styles.Warn.Render(line))
		} else {
			d.Line(line)
		}
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// extrasState says why the pods and events are not shown yet.
func extrasState(x nodeExtras) string {
	if x.err != nil {
		return "cannot read them: " + x.err.Error() + " (r reads again)"
	}
	return "reading…"
}
