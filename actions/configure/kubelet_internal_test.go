package configure

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIncurableExitIsANewLineWithAReasonARestartCannotCure(t *testing.T) {
	old := `E1123 18:00:00.000001    5364 run.go:72] "command failed" err="failed to run Kubelet: unable to load bootstrap kubeconfig: Unauthorized"`
	refused := `E1123 18:01:00.000001    5370 run.go:72] "command failed" err="failed to run Kubelet: dial tcp 127.0.0.1:6443: connect: connection refused"`
	denied := `E1123 18:02:00.000001    5371 run.go:72] "command failed" err="failed to run Kubelet: certificate request csr-x was not issued: certificate signing request is denied"`
	info := `I1123 18:02:00.000002    5371 csr.go:261] "Waiting for certificate to be issued" csr="csr-Unauthorized"`
	before := map[string]bool{old: true}

	assert.Empty(t, incurableExit([]string{old}, before), "a line from before the step is not this run's")
	assert.Empty(t, incurableExit([]string{old, refused}, before), "an unreachable API server may come back: the restart can cure it")
	assert.Empty(t, incurableExit([]string{info}, before), "only an exit counts")
	assert.Equal(t, denied, incurableExit([]string{old, refused, denied, info}, before))
}

// A kubelet that started before containerd opened its pipe exits with "cannot find the file specified", yet a
// restart cures it (the recovery actions restart it, the pipe is open by then): not a reason to stop.
func TestContainerdPipeNotOpenYetIsTransient(t *testing.T) {
	pipe := `E1127 13:00:00.000001    5380 run.go:72] "command failed" err="failed to run Kubelet: validate service connection: validate CRI v1 runtime API for endpoint \"npipe://./pipe/containerd-containerd\": rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing: open \\\\\\\\.\\\\pipe\\\\containerd-containerd: The system cannot find the file specified.\""`
	missing := `E1127 13:00:01.000001    5381 run.go:72] "command failed" err="failed to run Kubelet: unable to load bootstrap kubeconfig: open C:\\k\\bootstrap-kubeconfig: The system cannot find the file specified."`
	assert.Empty(t, incurableExit([]string{pipe}, nil))
	assert.Equal(t, missing, incurableExit([]string{pipe, missing}, nil), "a missing file wmcon wrote is still incurable")
}
