package configure

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/remote"
)

// kubeletPoll is how often the kubelet's log is read while a step waits on the kubelet.
var kubeletPoll = time.Second

// kubeletTail is how many of the log's last lines each read looks at.
const kubeletTail = 50

// kubeletIncurable matches the reasons for a kubelet's exit that the service's restart cannot cure: the API
// server does not let it in (token, CA, a denied certificate) or a file wmcon wrote is missing or wrong.
// An unreachable API server is not among them: the restart may find it back.
var kubeletIncurable = regexp.MustCompile(`Unauthorized|Forbidden|x509:|denied|cannot find the file|unable to load|failed to load|failed to validate|invalid`)

// kubeletTransient matches exits a restart does cure though the line looks incurable: the container runtime's
// pipe not open yet ("The system cannot find the file specified" for \\.\pipe\containerd-containerd): containerd
// opens it a moment after its service starts, and the service's recovery actions start the kubelet again.
var kubeletTransient = regexp.MustCompile(`validate CRI v1 runtime API .*code = Unavailable`)

// KubeletExitError is a kubelet that exited for a reason its restart cannot cure; Line is its own error
// line from its log.
type KubeletExitError struct{ Line string }

func (e *KubeletExitError) Error() string {
	return "the kubelet exited and restarting it cannot help; the kubelet says: " + e.Line
}

// kubeletService is the kubelet's Windows service (config.Services).
const kubeletService = "kubelet"

// whileKubeletRuns runs wait (a step waiting on the kubelet: its service to run, its CSR, its Node) and
// reads the end of the kubelet's log once a second meanwhile. A line written since the step began saying
// the kubelet exited for an incurable reason (a wrong bootstrap token, say) stops the wait at once with
// that line, instead of after the wait's whole timeout.
func (run *configureRun) whileKubeletRuns(ctx context.Context, wait func(context.Context) error) error {
	ks, _ := config.ServiceByName(kubeletService)
	before := map[string]bool{}
	if lines, err := run.h.TailOnce(ctx, ks.LogFile, kubeletTail); err == nil { // no log yet: nothing before
		for _, l := range lines {
			before[l] = true
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- wait(wctx) }()
	tick := time.NewTicker(kubeletPoll)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			lines, err := run.h.TailOnce(ctx, ks.LogFile, kubeletTail)
			if err != nil {
				continue // the wait itself reports a host that stopped answering
			}
			if line := incurableExit(lines, before); line != "" {
				cancel()
				<-done
				return &KubeletExitError{Line: line}
			}
		}
	}
}

// incurableExit is the newest line not in before that says the kubelet exited for an incurable reason.
func incurableExit(lines []string, before map[string]bool) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if before[lines[i]] || !strings.Contains(l, `"command failed"`) {
			continue
		}
		if kubeletIncurable.MatchString(l) && !kubeletTransient.MatchString(l) {
			return l
		}
	}
	return ""
}

// withKubeletReason adds the kubelet's last error line to err, so a bad token or URL shows its reason.
func withKubeletReason(ctx context.Context, h interface {
	TailOnce(ctx context.Context, path string, n int) ([]string, error)
}, err error) error {
	var exit *KubeletExitError
	if errors.As(err, &exit) {
		return err
	}
	ks, _ := config.ServiceByName(kubeletService)
	lines, terr := h.TailOnce(ctx, ks.LogFile, kubeletTail)
	if terr != nil {
		return err
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "E") || strings.Contains(l, "err=") {
			return fmt.Errorf("%w; the kubelet says: %s", err, l)
		}
	}
	return err
}

// kubeletKeyPoll is how often the host is asked for the kubelet's key until it has written one.
var kubeletKeyPoll = 500 * time.Millisecond

// waitKubeletKey waits until the host's kubelet has a client key and returns its public half, found where
// the kubelet's TLS bootstrap keeps it: the key of its current certificate when that file holds one (a
// kubelet asking again reuses it), otherwise the key it generated for its first request, kept in
// kubelet-client.key.tmp until the certificate is issued. The private key is read into memory and
// dropped by remote.PublicKeyOf.
func waitKubeletKey(ctx context.Context, h interface {
	PublicKeyOf(ctx context.Context, path string) (remote.KeyFile, bool, error)
}) (remote.KeyFile, error) {
	for {
		key, ok, err := h.PublicKeyOf(ctx, nodeconfig.KubeletClientCurrent)
		if errors.Is(err, remote.ErrNoPrivateKey) {
			ok, err = false, nil // the kubelet cannot use it either, and generates a key instead
		}
		if !ok && err == nil {
			key, ok, err = h.PublicKeyOf(ctx, nodeconfig.KubeletClientKeyTmp)
		}
		if err != nil {
			return remote.KeyFile{}, fmt.Errorf("read the kubelet's key: %w", err)
		}
		if ok {
			return key, nil
		}
		select {
		case <-ctx.Done():
			return remote.KeyFile{}, ctx.Err()
		case <-time.After(kubeletKeyPoll):
		}
	}
}
