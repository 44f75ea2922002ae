package windows

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"
)

// Program is the code behind a service's executable while the service runs: Options.Programs maps an
// executable's file name (such as "kubelet.exe") to one. It runs in its own goroutine once the service is
// RUNNING, and ctx ends when the service stops or the host goes down. Returning before ctx ends is the
// process exiting: the service terminates unexpectedly (SCM event 7031/7034), as on Windows. A program
// writes what it has to say to its log with Process.Log before it returns.
type Program func(ctx context.Context, p *Process) error

// Process is one run of a Program: its command line and what it may touch on its host.
type Process struct {
	Service string   // the Windows service name
	Exe     string   // the program's Windows path (the one kube-log-runner.exe starts, when wrapped)
	Args    []string // its arguments, without the executable
	PID     int
	LogFile string // kube-log-runner's -log-file, or the service's usual log; "" when none

	host *Host
}

// Flag returns the value of --name=value, --name value, -name=value or -name value.
func (p *Process) Flag(name string) (string, bool) { return flagValue(p.Args, name) }

// Hostname is the host's computer name.
func (p *Process) Hostname() string { return p.host.Hostname() }

// Now is the host's clock (Options.Clock): a kubelet stamps its node status with it.
func (p *Process) Now() time.Time { return p.host.now() }

// BootID is the host's current boot (Host.BootID): what a kubelet reports as status.nodeInfo.bootID.
func (p *Process) BootID() string { return p.host.BootID() }

// IP is the host's own address (its loopback address in the simulator), what a kubelet reports as its
// InternalIP.
func (p *Process) IP() string {
	host, _, err := net.SplitHostPort(p.host.Addr())
	if err != nil {
		return ""
	}
	return host
}

// ReadFile reads a file of the host's C: drive.
func (p *Process) ReadFile(winPath string) ([]byte, error) { return p.host.ReadFile(winPath) }

// WriteFile writes a file on the host's C: drive, creating its directories as Go's os.MkdirAll would.
func (p *Process) WriteFile(winPath string, data []byte) error {
	return p.host.WriteFile(winPath, data)
}

// RemoveFile deletes a file (or a directory tree) on the host.
func (p *Process) RemoveFile(winPath string) error { return p.host.RemoveFile(winPath) }

// Exists reports whether a file or directory exists on the host.
func (p *Process) Exists(winPath string) bool { return p.host.Exists(winPath) }

// Log appends a klog line (severity I, W, E or F, source file:line, message) to the process's log.
func (p *Process) Log(severity byte, source, message string) {
	if p.LogFile == "" {
		return
	}
	p.host.appendLines(mustClean(p.LogFile, p.host.home), klogLine(severity, p.host.now(), p.PID, source, message))
}

func mustClean(winPath, home string) string {
	p, err := cleanWinPath(winPath, home)
	if err != nil {
		return ""
	}
	return p
}

// launch is what a service's binPath starts: the executable and its arguments, seen through
// kube-log-runner.exe when the service runs under it.
type launch struct {
	exe     string
	args    []string
	logFile string // kube-log-runner -log-file
	runner  bool
}

// parseLaunch splits a binPath as CommandLineToArgvW does for the simple cases WMCO uses (spaces separate
// arguments, double quotes group), and unwraps kube-log-runner.exe's own flags.
func parseLaunch(binPath string) launch {
	words := cmdSplit(binPath)
	if len(words) == 0 {
		return launch{}
	}
	l := launch{exe: words[0], args: words[1:]}
	if !strings.EqualFold(exeName(l.exe), "kube-log-runner.exe") {
		return l
	}
	l.runner = true
	rest := l.args
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
		if v, ok := strings.CutPrefix(strings.TrimLeft(rest[0], "-"), "log-file="); ok {
			l.logFile = v
		}
		rest = rest[1:]
	}
	l.exe, l.args = "", nil
	if len(rest) > 0 {
		l.exe, l.args = rest[0], rest[1:]
	}
	return l
}

// lockImagesLocked locks the files the service's processes run from (kube-log-runner.exe and the program
// it starts), as Windows does until they exit: replacing a running service's binary is refused.
func (s *service) lockImagesLocked(h *Host, l launch) {
	exes := []string{l.exe}
	if words := cmdSplit(s.BinaryPath); l.runner && len(words) > 0 {
		exes = append(exes, words[0])
	}
	for _, exe := range exes {
		if p, err := cleanWinPath(exe, h.home); err == nil && len(exe) > 2 && exe[1] == ':' {
			s.images = append(s.images, h.fs.lockImage(p))
		}
	}
}

// exeName is the file name of a Windows path, lower-cased.
func exeName(winPath string) string {
	winPath = strings.ReplaceAll(winPath, "/", `\`)
	return strings.ToLower(winPath[strings.LastIndex(winPath, `\`)+1:])
}

func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		key, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if key != name {
			continue
		}
		if hasVal {
			return val, true
		}
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			return args[i+1], true
		}
		return "", true
	}
	return "", false
}

// fileFlags are the flags whose file each WMCO program opens at start; a missing one makes it exit, as
// the real program does. Log files are opened too, so their directory must exist.
var fileFlags = map[string][]string{
	"containerd.exe":                     {"config"},
	"kube-proxy.exe":                     {"kubeconfig", "config"},
	"hybrid-overlay-node.exe":            {"bootstrap-kubeconfig", "k8s-cacert"},
	"windows_exporter.exe":               {"config.file", "web.config.file"},
	"azure-cloud-node-manager.exe":       {"kubeconfig", "cloud-config"},
	"windows-instance-config-daemon.exe": {"kubeconfig"},
}

var logFlags = map[string][]string{
	"containerd.exe":          {"log-file"},
	"hybrid-overlay-node.exe": {"logfile"},
	"csi-proxy.exe":           {"log_file"},
}

// startFailure is why a started service's process exits at once: kube-log-runner cannot open its log
// or find its program, or the program misses a file it needs. "" means it keeps running.
func (h *Host) startFailure(l launch) string {
	if l.runner {
		if l.logFile != "" && !h.Exists(parentDir(l.logFile)) {
			return fmt.Sprintf("failed to create log file %s: open %s: The system cannot find the path specified.", l.logFile, l.logFile)
		}
		if l.exe == "" {
			return "missing command"
		}
		if !h.Exists(l.exe) {
			return fmt.Sprintf("exec: %q: file does not exist", l.exe)
		}
	}
	name := exeName(l.exe)
	for _, f := range logFlags[name] {
		if v, ok := flagValue(l.args, f); ok && v != "" && !h.Exists(parentDir(v)) {
			return fmt.Sprintf("open %s: The system cannot find the path specified.", v)
		}
	}
	for _, f := range fileFlags[name] {
		if v, ok := flagValue(l.args, f); ok && v != "" && !h.Exists(v) {
			return fmt.Sprintf("open %s: The system cannot find the file specified.", v)
		}
	}
	return ""
}

func parentDir(winPath string) string {
	winPath = strings.TrimRight(strings.ReplaceAll(winPath, "/", `\`), `\`)
	if i := strings.LastIndex(winPath, `\`); i > 2 {
		return winPath[:i]
	}
	return `C:\`
}

// startProcessLocked runs what a service that just reached RUNNING starts. A process that cannot start
// writes its error where the real one would and the service terminates; a Program from Options.Programs
// runs until the service stops. It reports whether the service is still running.
func (h *Host) startProcessLocked(s *service) bool {
	l := parseLaunch(s.BinaryPath)
	logFile := l.logFile
	if logFile == "" {
		logFile = logFileOf(s)
	}
	if why := h.startFailure(l); why != "" {
		if logFile != "" && h.Exists(parentDir(logFile)) { // no directory, no log: the error went to a console nobody sees
			h.appendLines(mustClean(logFile, h.home), h.exitLine(s, why))
		}
		h.crashLocked(s)
		return false
	}
	s.lockImagesLocked(h, l)
	prog, ok := h.opts.Programs[exeName(l.exe)]
	if !ok && exeName(l.exe) == "hybrid-overlay-node.exe" {
		// Without a program that waits for the Node's subnet (sim/ovn), the host's own subnet, at once.
		h.createHybridOverlayNetworksLocked()
	}
	if !ok {
		return true
	}
	ctx, cancel := context.WithCancel(h.bootCtx)
	s.cancel = cancel
	p := &Process{Service: s.Name, Exe: l.exe, Args: l.args, PID: s.pid, LogFile: logFile, host: h}
	epoch, pid := h.epoch, s.pid
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer cancel()
		err := prog(ctx, p)
		if ctx.Err() != nil {
			return // stopped by the SCM or the host going down
		}
		if err != nil {
			p.Log('E', "run.go:72", fmt.Sprintf(`"command failed" err=%q`, err.Error()))
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.epoch == epoch && s.pid == pid && s.state == StateRunning {
			h.exitedLocked(s)
		}
	}()
	return true
}

// exitLine is the last line a process that cannot start writes: klog for the Kubernetes programs, logrus
// for containerd.
func (h *Host) exitLine(s *service, why string) string {
	t := h.now()
	if strings.EqualFold(s.Name, "containerd") {
		return fmt.Sprintf(`time="%s" level=fatal msg=%q`, t.UTC().Format(time.RFC3339Nano), why)
	}
	return klogLine('E', t, s.pid, "run.go:72", fmt.Sprintf(`"command failed" err=%q`, why))
}

// ServiceRunning reports whether another service of the host is RUNNING (a kubelet checks its runtime).
func (p *Process) ServiceRunning(name string) bool { return p.host.ServiceRunning(name) }

// ContainerdPipe is the named pipe containerd serves its CRI API on (the kubelet's runtime endpoint).
const ContainerdPipe = "containerd-containerd"

// PipeOpen reports whether a named pipe is open on the host: containerd's is, once its service has run for
// Options.ContainerdPipeDelay.
func (p *Process) PipeOpen(name string) bool { return p.host.PipeOpen(name) }

// PipeOpen reports whether a named pipe (\\.\pipe\NAME) is open on the host.
func (h *Host) PipeOpen(name string) bool {
	if !strings.EqualFold(name, ContainerdPipe) {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.services["containerd"]
	return ok && s.state == StateRunning && (h.opts.ContainerdPipeDelay < 0 || time.Since(s.started) >= h.opts.ContainerdPipeDelay)
}
