package cli

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// The command line knows the demo only as main hands it in: without one, --demo says so instead of
// connecting to the kubeconfig's cluster.
func TestDemoFlagWithoutADemo(t *testing.T) {
	var out, errOut bytes.Buffer
	root := NewRootCommand(&out, &errOut, nil)
	root.SetArgs([]string{"--demo", "byoh", "list"})
	require.ErrorContains(t, root.ExecuteContext(context.Background()), "this build of wmcon has no demo cluster")
}
