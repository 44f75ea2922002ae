package windows

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wmcon/wmcon/config"
)

// Kubelet configuration files; a kubelet that cannot load them stops, as a real one exits.
const (
	kubeletConfPath         = `C:\k\kubelet.conf`
	kubeconfigPath          = `C:\k\kubeconfig`
	bootstrapKubeconfigPath = `C:\k\bootstrap-kubeconfig`
)

// klogLine formats a line the way klog does: Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg.
func klogLine(sev byte, t time.Time, pid int, src, msg string) string {
	return fmt.Sprintf("%c%02d%02d %02d:%02d:%02d.%06d %7d %s] %s", sev, int(t.Month()), t.Day(),
		t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1000, pid, src, msg)
}

func logFileOf(s *service) string {
	if ws, ok := config.ServiceByName(s.Name); ok {
		return ws.LogFile
	}
	return ""
}

func (h *Host) appendLines(path string, lines ...string) {
	if path == "" || len(lines) == 0 {
		return
	}
	_ = h.fs.appendFile(path, []byte(strings.Join(lines, "\n")+"\n"))
}

// writeStartLineLocked notes a service start in its log, so a reboot is visible to tail clients.
func (h *Host) writeStartLineLocked(s *service) {
	h.appendLines(logFileOf(s), startLine(s, h.now()))
}

func startLine(s *service, t time.Time) string {
	switch strings.ToLower(s.Name) {
	case "kubelet":
		return klogLine('I', t, s.pid, "server.go:487", `"Kubelet version" kubeletVersion="v1.37.1"`)
	case "kube-proxy":
		return klogLine('I', t, s.pid, "server.go:870", `"Version info" version="v1.37.1"`)
	case "containerd":
		return fmt.Sprintf(`time="%s" level=info msg="starting containerd" revision= version=v2.1.4`, t.UTC().Format(time.RFC3339Nano))
	default:
		return klogLine('I', t, s.pid, "main.go:112", fmt.Sprintf(`"Starting %s"`, s.Name))
	}
}

// logLoop is one boot's logger: every LogInterval each running service may write a line.
func (h *Host) logLoop(ctx context.Context) {
	defer h.wg.Done()
	t := time.NewTicker(h.opts.LogInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			h.writeTick()
		}
	}
}

type pendingLine struct{ path, line string }

func (h *Host) writeTick() {
	h.mu.Lock()
	h.logTick++
	var out []pendingLine
	for _, s := range h.sortedServicesLocked() {
		if s.state != StateRunning {
			continue
		}
		if line := h.serviceLineLocked(s); line != "" {
			out = append(out, pendingLine{logFileOf(s), line})
		}
	}
	h.mu.Unlock()
	for _, p := range out {
		h.appendLines(p.path, p.line)
	}
}

var kubeletMessages = []struct {
	sev      byte
	src, msg string
}{
	{'I', "kubelet.go:2345", `"SyncLoop (PLEG): event for pod" pod="openshift-monitoring/node-exporter-win"`},
	{'I', "kubelet.go:2421", `"Syncing pods"`},
	{'I', "kubelet_node_status.go:538", `"Updating node status"`},
	{'I', "reconciler_common.go:245", `"operationExecutor.VerifyControllerAttachedVolume started"`},
	{'W', "cri_stats_provider.go:443", `"Failed to get the container stats for pod sandbox" err="hcs::GetComputeSystem: not found"`},
	{'I', "kubelet.go:2421", `"Syncing pods"`},
	{'E', "kubelet_pods.go:401", `"Error on log rotation" err="container not found"`},
	{'I', "kuberuntime_manager.go:1051", `"Pod sandbox is ready" pod="default/win-webserver"`},
}

// serviceLineLocked picks a plausible line: the kubelet talks every tick, the others now and then.
func (h *Host) serviceLineLocked(s *service) string { return h.serviceLineAtLocked(s, h.now()) }

// writeHistory rewrites each running service's log as if the host had been up opts.LogHistory intervals
// already: the service's start line, then its lines up to now. A first tail of the host then shows what a
// host that has been up a while shows, not an empty file.
func (h *Host) writeHistory() {
	n := h.opts.LogHistory
	if n <= 0 {
		return
	}
	files := map[string][]string{}
	h.mu.Lock()
	now := h.now()
	since := now.Add(-time.Duration(n+1) * h.opts.LogInterval)
	running := []*service{}
	for _, s := range h.sortedServicesLocked() {
		if s.state == StateRunning && logFileOf(s) != "" {
			running = append(running, s)
			files[logFileOf(s)] = []string{startLine(s, since.Add(-h.opts.StoppedAgo[s.Name]))}
		}
	}
	for i := n; i >= 1; i-- {
		t := now.Add(-time.Duration(i) * h.opts.LogInterval)
		h.logTick++
		for _, s := range running {
			// A service that has stopped since has the same history, ending when it stopped.
			if line := h.serviceLineAtLocked(s, t.Add(-h.opts.StoppedAgo[s.Name])); line != "" {
				files[logFileOf(s)] = append(files[logFileOf(s)], line)
			}
		}
	}
	h.mu.Unlock()
	for path, lines := range files {
		_ = h.fs.writeFile(path, []byte(strings.Join(lines, "\n")+"\n"), true)
	}
}

func (h *Host) serviceLineAtLocked(s *service, t time.Time) string {
	if logFileOf(s) == "" {
		return ""
	}
	if strings.EqualFold(s.Name, "kubelet") {
		m := kubeletMessages[h.logTick%len(kubeletMessages)]
		return klogLine(m.sev, t, s.pid, m.src, m.msg)
	}
	if h.logTick%5 != 0 {
		return ""
	}
	if strings.EqualFold(s.Name, "containerd") {
		return fmt.Sprintf(`time="%s" level=info msg="ImageCreate event name:\"mcr.microsoft.com/oss/kubernetes/pause:3.9\""`, t.UTC().Format(time.RFC3339Nano))
	}
	return klogLine('I', t, s.pid, "main.go:210", fmt.Sprintf(`"%s is healthy"`, s.Name))
}

// checkKubelet runs after the kubelet reaches RUNNING. Missing configuration makes it log klog errors
// and terminate; a bootstrap kubeconfig alone is accepted and the TLS bootstrap writes the kubeconfig.
func (h *Host) checkKubelet(epoch int) {
	_, confErr := h.fs.stat(kubeletConfPath)
	_, kcErr := h.fs.stat(kubeconfigPath)
	_, bootErr := h.fs.stat(bootstrapKubeconfigPath)
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.services["kubelet"]
	if !ok || h.epoch != epoch || s.state != StateRunning {
		return
	}
	t, pid, path := h.now(), s.pid, logFileOf(s)
	switch {
	case confErr != nil:
		h.appendLines(path,
			klogLine('E', t, pid, "run.go:74", `"command failed" err="failed to load kubelet config file, path: C:\\k\\kubelet.conf, error: failed to load Kubelet config file C:\\k\\kubelet.conf, error failed to read kubelet config file \"C:\\k\\kubelet.conf\", error: open C:\\k\\kubelet.conf: The system cannot find the file specified."`))
		h.crashLocked(s)
	case kcErr != nil && bootErr != nil:
		h.appendLines(path,
			klogLine('E', t, pid, "server.go:295", `"Failed to run kubelet" err="failed to run Kubelet: unable to load bootstrap kubeconfig: stat C:\\k\\bootstrap-kubeconfig: The system cannot find the file specified."`))
		h.crashLocked(s)
	case kcErr != nil:
		h.appendLines(path,
			klogLine('I', t, pid, "bootstrap.go:98", `"Using bootstrap kubeconfig to generate TLS client cert, key and kubeconfig file"`),
			klogLine('I', t, pid, "certificate_manager.go:356", `"Certificate rotation is enabled"`))
		boot, _ := h.fs.readFile(bootstrapKubeconfigPath)
		_ = h.fs.writeFile(kubeconfigPath, boot, true)
	}
}
