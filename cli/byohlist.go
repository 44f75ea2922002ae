package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/wmcon/wmcon/actions/setup"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/session"
)

// byohEntry is one windows-instances entry as byoh list and validate print it (-o json: an array of them).
type byohEntry struct {
	Address string           `json:"address"`
	Value   string           `json:"value"`          // the entry as the ConfigMap has it ("username=...")
	User    string           `json:"user,omitempty"` // the user it names, when it names one
	Node    string           `json:"node,omitempty"` // the node at that address, once it is one
	Problem string           `json:"problem,omitempty"`
	SSH     *setup.BYOHReach `json:"ssh,omitempty"` // validate --ssh only
}

// byohNodes finds the node at each address of windows-instances; a cluster whose nodes cannot be read
// leaves the column empty rather than failing the list.
func byohNodes(ctx context.Context, s *session.Session, data map[string]string) map[string]string {
	nodes := map[string]string{}
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return nodes
	}
	for addr := range data {
		if name, ok := snap.NodeByAddress(addr); ok {
			nodes[addr] = name
		}
	}
	return nodes
}

// entries are the report's entries by address.
func (r byohReport) entries() []byohEntry {
	out := []byohEntry{}
	for addr, value := range r.data {
		e := byohEntry{Address: addr, Value: value, Node: r.nodes[addr]}
		if user, ok := strings.CutPrefix(strings.TrimSpace(value), "username="); ok && model.CheckBYOHUser(user) == nil {
			e.User = user
		}
		for _, p := range r.problems {
			if p.Address == addr {
				e.Problem = p.Problem
			}
		}
		if reach, ok := r.reach[addr]; ok {
			e.SSH = &reach
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Address < out[j].Address })
	return out
}

// writeBYOHTable prints the entries under a header, as oc get does: an entry whose user cannot be read
// shows its value quoted, a host that is no node yet "-".
func writeBYOHTable(w io.Writer, entries []byohEntry) error {
	withSSH := false
	for _, e := range entries {
		withSSH = withSSH || e.SSH != nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "ADDRESS\tUSER\tNODE\tPROBLEM"
	if withSSH {
		header += "\tSSH"
	}
	fmt.Fprintln(tw, header)
	for _, e := range entries {
		user := e.User
		if user == "" {
			user = fmt.Sprintf("%q", e.Value)
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s", e.Address, user, dash(e.Node), dash(e.Problem))
		if withSSH {
			ssh := "-"
			if e.SSH != nil {
				ssh = reachText(*e.SSH)
			}
			line += "\t" + ssh
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}
