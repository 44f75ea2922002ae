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
