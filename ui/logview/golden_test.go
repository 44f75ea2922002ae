package logview

import (
	"bytes"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/wmcon/wmcon/actions/logline"
)

// standalone mounts the log view as a whole program, as a root model would.
type standalone struct{ m Model }

func (s standalone) Init() tea.Cmd { return s.m.Init() }

func (s standalone) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if ws, ok := msg.(tea.WindowSizeMsg); ok {
		s.m.SetSize(ws.Width, ws.Height)
	}
	var cmd tea.Cmd
	s.m, cmd = s.m.Update(msg)
	return s, cmd
}

func (s standalone) View() tea.View { return tea.NewView(s.m.View()) }

// TestGoldenMergedNodes: two nodes merged, an error and a warning, a search highlighted, the cursor on
// the newest match. Regenerate with: go test ./ui/logview -run Golden -update
func TestGoldenMergedNodes(t *testing.T) {
	m := New(Options{Request: logline.Request{Nodes: nodes("win-a", "win-b")}, Theme: noColor})
	lines := []logline.Line{
		{Node: "win-a", Source: logline.SourceAPI, Level: logline.LevelInfo, Text: `I0304 05:06:07.000001    2856 kubelet.go:2421] "Syncing pods"`},
		{Node: "win-b", Source: logline.SourceAPI, Level: logline.LevelWarning, Text: `W0304 05:06:07.100000    3012 cri_stats_provider.go:443] "Failed to get the container stats for pod sandbox" err="hcs::GetComputeSystem: not found"`},
		{Node: "win-a", Source: logline.SourceAPI, Level: logline.LevelInfo, Text: `I0304 05:06:08.000000    2856 kubelet_node_status.go:538] "Updating node status"`},
		{Node: "win-b", Source: logline.SourceSSH, Level: logline.LevelError, Text: `E0304 05:06:08.500000    3012 kubelet_pods.go:401] "Error on log rotation" err="container not found"`},
		{Node: "win-a", Source: logline.SourceAPI, Level: logline.LevelInfo, Text: `I0304 05:06:09.000000    2856 kubelet.go:2421] "Syncing pods"`},
	}
	tm := teatest.NewTestModel(t, standalone{m: m}, teatest.WithInitialTermSize(100, 10))
	tm.Send(LinesMsg{Lines: lines})
	for _, k := range keys("/", "syncing", "enter") {
		tm.Send(k)
	}
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("[/syncing]")) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	final, ok := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(standalone)
	if !ok {
		t.Fatal("the program did not return the log view")
	}
	var b bytes.Buffer
	w := &colorprofile.Writer{Forward: &b, Profile: colorprofile.ASCII}
	if _, err := w.Write([]byte(final.m.View())); err != nil {
		t.Fatal(err)
	}
	teatest.RequireEqualOutput(t, b.Bytes())
}
