package cli

import (
	"context"
	"io"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/session"
	"github.com/wmcon/wmcon/sim/demo"
	"github.com/wmcon/wmcon/testsupport/uidriver"
	"github.com/wmcon/wmcon/ui"
)

// waitScreen waits (at most timeout) until the screen matches re, giving the console its messages.
func waitScreen(t *testing.T, d *uidriver.Driver, timeout time.Duration, re *regexp.Regexp) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !re.MatchString(d.Screen()) {
		if time.Now().After(deadline) {
			t.Fatalf("the screen never matched %s:\n%s", re, d.Screen())
		}
		d.Wait(100*time.Millisecond, "\x00") // never on screen: only runs the console's messages for a while
	}
}

// TestDemoConsoleShowsPodFigures drives the console on wmcon --demo, wired as wmcon wires it: the node
// details of the node short of memory list its pods with CPU and memory figures, the pod holding most of
// the memory marked; the pod's details show its container with its history; the health view names the
// pod among the causes, before the node's memory check.
func TestDemoConsoleShowsPodFigures(t *testing.T) {
	t.Setenv("WMCON_AUDIT_LOG", t.TempDir()+"/audit.log")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	g := &globalOptions{demo: true, demoCluster: testDemo, noColor: true, stdout: io.Discard, stderr: io.Discard}
	s, err := g.openSession(ctx)
	require.NoError(t, err)
	defer s.Close()
	opts := consoleOptions(g, s)
	require.NoError(t, addMetricsFeeds(g, s, &opts, session.MetricsOptions{PrometheusURL: g.prometheus}))
	node := demo.NodeName("127.0.0.5")
	// Tall enough for the whole node page: the pods list must be seen to be read before p selects it,
	// and at 45 lines it is below the first screen once the node's metrics have come.
	d := uidriver.New(t, ui.New(ui.NewProgramContext(opts), s.Watcher.Snapshots()), 160, 100)
	d.WaitFor(30*time.Second, node)

	d.Press("/", "127-0-0-5", "enter", "enter")
	d.WaitFor(30*time.Second, "Node "+node, "Pods (")
	d.Press("p")
	// CPU comes with the second read of the exporter's counters (PodMetricsWarmup after the first).
	waitScreen(t, d, 30*time.Second, regexp.MustCompile(`▶ windows-apps/dotnet-api-5 .* \d+m +\S+ +⚠ 9216Mi +\S+`))
	d.WaitFor(5*time.Second, "CPU in millicores, memory as working set; from windows_exporter's container collector")

	d.Press("enter")
	d.WaitFor(10*time.Second, "Pod windows-apps/dotnet-api-5 on "+node, "Containers (1)", "Pressure",
		"pod windows-apps/dotnet-api-5 uses 56 % of the node's memory")
	waitScreen(t, d, 30*time.Second, regexp.MustCompile(`Memory: +⚠ 9216Mi +[▁-█]+ +min `))

	d.Press("esc", "esc", "h")
	d.WaitFor(90*time.Second, "Pods' memory and CPU", "pod windows-apps/dotnet-api-5 uses 56 % of the node's memory (9.0 GiB of 16.0 GiB), and the node is short of it")
	waitScreen(t, d, 5*time.Second, regexp.MustCompile(`(?s)Pods' memory and CPU.*Memory use`))
}
