package ui

import (
	"fmt"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/ui/layout"
)

// paneKind is a pane's place in paneSpecs (and its tab number minus one). The constants name the panes
// other code refers to.
type paneKind int

const (
	paneNodes paneKind = iota
	paneMachineSets
	paneSecrets
	paneMirrors
)

// paneSpec describes one list pane. Adding a pane is one entry in paneSpecs: its tab, its number key and
// its place in help follow from the slice.
type paneSpec struct {
	title   string
	columns []Column
	rows    func(p *listPane, snap *model.Snapshot, env rowEnv) []Row
	notice  func(snap *model.Snapshot) (msg string, blocking bool) // see paneNotice
	empty   string                                                 // what an empty pane says ("" → "no <title>")
	count   func(snap *model.Snapshot) int                         // the tab's count (nil: the top-level rows)
}

var paneSpecs = []paneSpec{
	paneNodes: {title: "Nodes", columns: nodeColumns, notice: nodesNotice,
		rows: func(p *listPane, snap *model.Snapshot, env rowEnv) []Row {
			return p.markRows(p.markMirrorDrift(nodeRows(snap, env, p.windowsOnly), env))
		}},
	paneMachineSets: {title: "MachineSets", columns: machineSetColumns, notice: machineSetsNotice,
		rows: func(p *listPane, snap *model.Snapshot, env rowEnv) []Row {
			if snap == nil {
				return nil
			}
			return append(machineSetRows(snap, env, p.expanded, p.windowsOnly), byohRows(snap, env)...)
		}},
	paneSecrets: {title: "Secrets", columns: secretColumns, notice: secretsNotice,
		count: func(snap *model.Snapshot) int { return snap.Secrets.Present() }, // of the three WMCO needs
		rows:  func(_ *listPane, snap *model.Snapshot, env rowEnv) []Row { return secretRows(snap, env) }},
	paneMirrors: {title: "Mirrors", columns: mirrorColumns, notice: mirrorsNotice,
		empty: "no ImageDigestMirrorSets or ImageTagMirrorSets",
		rows:  mirrorPaneRows},
}

func (k paneKind) spec() *paneSpec { return &paneSpecs[k] }
func (k paneKind) title() string   { return k.spec().title }

// paneTitles are the panes' titles in tab order, which the key map numbers.
func paneTitles() []string {
	out := make([]string, len(paneSpecs))
	for i, p := range paneSpecs {
		out[i] = p.title
	}
	return out
}
func (k paneKind) columns() []Column { return k.spec().columns }
func newListPanes() []listPane {
	panes := make([]listPane, len(paneSpecs))
	for k := range panes {
		panes[k] = newListPane(paneKind(k))
	}
	return panes
}

// listPane is one tab: the rows built from the latest snapshot, the filter over them and the selection.
// The selection is remembered by row key so it follows its object when the list reorders.
type listPane struct {
	kind        paneKind
	all         []Row        // every row of the snapshot, rebuilt when data or view toggles change
	objects     int          // the top-level rows of all (objectCount), counted when all is rebuilt
	rows        []Row        // all, filtered by query
	found       filterResult // how the filtered rows matched
	widths      []int
	natural     []int // the columns' widths before fitting (naturalWidths of all)
	gap         int
	cursor      int
	offset      int
	selectedKey string
	query       string
	windowsOnly bool                 // nodes and MachineSets panes: w
	marked      map[string]bool      // nodes pane: nodes marked for a batch action
	expanded    map[string]bool      // MachineSets pane: keys of expanded MachineSets
	mirrorDrift map[string]bool      // Nodes pane: nodes whose registries differ from the rendered files
	mirrors     *model.MirrorsReport // Mirrors pane: the rendered files and the nodes' states, once read
	metricsOn   bool                 // Nodes pane: the console reads metrics, so their columns show
	stale       bool                 // its rows are of an older snapshot (Model.showPane)
	cells       *cellCache           // its cells as the last frame drew them (shared by the Model's copies)
	lineWidths  *layout.LineWidths   // its lines' widths as the last frame measured them (shared likewise)
}

func newListPane(kind paneKind) listPane {
	return listPane{kind: kind, expanded: map[string]bool{}, marked: map[string]bool{}, cells: &cellCache{}, lineWidths: &layout.LineWidths{}}
}

// markPrefix shows a node marked for a batch action in its name cell.
const markPrefix = "+ "

// markRows prefixes the names of marked nodes and forgets marks of nodes that are gone.
func (p *listPane) markRows(rows []Row) []Row {
	seen := map[string]bool{}
	for i := range rows {
		if p.marked[rows[i].Key] {
			seen[rows[i].Key] = true
			rows[i].Cells[0] = markPrefix + rows[i].Cells[0]
		}
	}
	for k := range p.marked {
		if !seen[k] {
			delete(p.marked, k)
		}
	}
	return rows
}

// markedKeys are the marked nodes in display order.
func (p *listPane) markedKeys() []string {
	var out []string
	for _, r := range p.all {
		if p.marked[r.Key] {
			out = append(out, r.Key)
		}
	}
	return out
}

// rebuild recomputes the rows from a snapshot. width is the table width, for column sizing.
func (p *listPane) rebuild(snap *model.Snapshot, env rowEnv, width int) {
	p.stale = false
	p.all = p.kind.spec().rows(p, snap, env)
	p.objects = p.countObjects()
	p.resize(width)
	p.applyFilter()
}

// resize refits the columns to a new width without rebuilding the rows.
func (p *listPane) resize(width int) {
	p.natural = naturalWidths(p.columns(), p.all)
	p.widths, p.gap = fitColumns(p.columns(), p.natural, width)
}

func (p *listPane) setQuery(q string) {
	p.query = q
	p.applyFilter()
}

// applyFilter refreshes the visible rows and puts the cursor back on the selected object when it is
// still listed; otherwise the cursor stays at the same position and selects whatever is there now.
func (p *listPane) applyFilter() {
	p.rows, p.found = filterRows(p.all, p.query)
	if i := p.indexOf(p.selectedKey); i >= 0 {
		p.cursor = i
	}
	p.setCursor(p.cursor)
}

func (p *listPane) indexOf(key string) int {
	if key == "" {
		return -1
	}
	for i := range p.rows {
		if p.rows[i].Key == key {
			return i
		}
	}
	return -1
}

func (p *listPane) setCursor(i int) {
	p.cursor = max(0, min(i, len(p.rows)-1))
	if len(p.rows) > 0 {
		p.selectedKey = p.rows[p.cursor].Key
	}
}

func (p *listPane) move(delta int) { p.setCursor(p.cursor + delta) }

// scroll keeps the cursor inside a window of visible rows.
func (p *listPane) scroll(visible int) {
	if visible <= 0 {
		return
	}
	if p.cursor < p.offset {
		p.offset = p.cursor
	}
	if p.cursor >= p.offset+visible {
		p.offset = p.cursor - visible + 1
	}
	p.offset = max(0, min(p.offset, len(p.rows)-visible))
}

func (p *listPane) selected() (Row, bool) {
	if p.cursor < 0 || p.cursor >= len(p.rows) {
		return Row{}, false
	}
	return p.rows[p.cursor], true
}

// toggleExpand opens or closes the MachineSet under the cursor (or the parent of the Machine under it).
// It reports whether anything changed, in which case the caller rebuilds the rows.
func (p *listPane) toggleExpand(open, close bool) bool {
	r, ok := p.selected()
	if !ok || p.kind != paneMachineSets {
		return false
	}
	key := r.Key
	if r.Parent != "" {
		key = r.Parent
	}
	want := !p.expanded[key]
	if open && !close {
		want = true
	} else if close && !open {
		want = false
	}
	if want == p.expanded[key] {
		return false
	}
	p.expanded[key] = want
	p.selectedKey = key // a collapsing parent takes the selection from its Machine
	return true
}

// paneNotice says why a pane cannot show its rows (blocking) or what is wrong while it still shows the
// last known rows (not blocking). An empty message means all is well.
func paneNotice(snap *model.Snapshot, kind paneKind) (msg string, blocking bool) {
	if snap == nil {
		return "loading…", true
	}
	return kind.spec().notice(snap)
}

func nodesNotice(snap *model.Snapshot) (string, bool) {
	return resourceNotice(snap, model.ResNodes, "Nodes")
}

// machineSetsNotice: without Machines the MachineSets are still worth listing.
func machineSetsNotice(snap *model.Snapshot) (string, bool) {
	if msg, blocking := resourceNotice(snap, model.ResMachineSets, "MachineSets"); msg != "" {
		return msg, blocking
	}
	msg, _ := resourceNotice(snap, model.ResMachines, "Machines")
	return msg, false
}

func resourceNotice(snap *model.Snapshot, res model.Resource, kind string) (string, bool) {
	state := snap.Resources[res] // a resource the watcher has not reported on yet is still Syncing
	switch state.Availability {
	case model.Available:
		return "", false
	case model.Syncing:
		if state.Partial { // the rows that arrived are shown, with how many more are coming
			return orText(state.Message, "more "+kind+" loading…"), false
		}
		return "loading " + kind + "…", true
	case model.NotInstalled:
		return kind + " not available on this cluster", true
	case model.Forbidden:
		return orText(state.Message, fmt.Sprintf("listing %s is forbidden: ask a cluster admin for list and watch on %s", kind, res)), true
	}
	return orText(state.Message, kind+": the API server keeps failing; showing the last known data while wmcon retries"), false
}

// mirrorsNotice combines IDMS and ITMS: the pane is only unavailable when neither can be shown.
func mirrorsNotice(snap *model.Snapshot) (string, bool) {
	idms, idmsBlocking := resourceNotice(snap, model.ResIDMS, "ImageDigestMirrorSets")
	itms, itmsBlocking := resourceNotice(snap, model.ResITMS, "ImageTagMirrorSets")
	if idmsBlocking && itmsBlocking {
		state := snap.Resources[model.ResIDMS].Availability
		if state == model.NotInstalled && snap.Resources[model.ResITMS].Availability == model.NotInstalled {
			return "ImageDigestMirrorSets and ImageTagMirrorSets not available on this cluster", true
		}
		return joinNotices(idms, itms), true
	}
	return joinNotices(idms, itms), false
}

func joinNotices(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

func orText(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// objectCount is the number of top-level rows (MachineSets, not their Machines).
func (p *listPane) objectCount() int { return p.objects }

// countObjects counts the top-level rows of all (the tab shows it each frame; the rows change only here).
func (p *listPane) countObjects() int {
	n := 0
	for i := range p.all {
		if p.all[i].Parent == "" && (p.kind != paneMachineSets || p.all[i].Key != byohGroupKey) {
			n++
		}
	}
	return n
}

// secretsNotice blocks the pane only when the WMCO namespace's secrets cannot be read; the user-data
// and pull secrets live elsewhere and are watched by name, so their trouble is a note above the rows.
func secretsNotice(snap *model.Snapshot) (string, bool) {
	if msg, blocking := resourceNotice(snap, model.ResSecrets, "Secrets"); blocking {
		return msg, true
	} else if msg != "" {
		return msg, false
	}
	userData, _ := resourceNotice(snap, model.ResUserData, "the windows-user-data secret")
	pull, _ := resourceNotice(snap, model.ResPullSecret, "the pull secret")
	return joinNotices(userData, pull), false
}
