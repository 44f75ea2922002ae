package cli

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/wmcon/wmcon/cluster/testserver"
)

// srv is one real etcd + kube-apiserver shared by this package's tests.
var srv *testserver.Server

// klogChildEnv marks the child process of TestQuietKlogKeepsClientGoErrorsOffStderr, which needs no server.
const klogChildEnv = "WMCON_KLOG_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(klogChildEnv) == "1" {
		os.Exit(m.Run())
	}
	testserver.Main(m, &srv)
}

// runWmcon runs the command line as the wmcon binary would and returns its exit code and output.
func runWmcon(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := NewRootCommand(&out, &errOut)
	root.SetArgs(args)
	code = 0
	if err := root.ExecuteContext(context.Background()); err != nil {
		errOut.WriteString("wmcon: " + err.Error() + "\n")
		code = exitCode(err)
	}
	return code, out.String(), errOut.String()
}
