package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/demo"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// srv is one real etcd + kube-apiserver shared by this package's tests.
var srv *kubeapi.Server

// testDemo is the demo the tests' --demo opens, handed in as main does.
var testDemo DemoCluster = demo.Launcher{}

// klogChildEnv marks the child process of TestQuietKlogKeepsClientGoErrorsOffStderr, which needs no server.
const klogChildEnv = "WMCON_KLOG_CHILD"

// TestMain starts the server; every change a test makes is audited, and unless the test names its own log
// (t.Setenv) the records go to a log of this run, never the user's.
func TestMain(m *testing.M) {
	if os.Getenv(mainChildEnv) == "1" {
		runMainChild()
	}
	if os.Getenv(klogChildEnv) == "1" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "wmcon-cli-test-audit")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(actions.AuditEnv, filepath.Join(dir, "audit.log"))
	// No test reads the user's config file: the default one is looked for in this run's folder (absent).
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	os.Unsetenv(config.FileEnv)
	code := runWithServer(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// runWithServer is kubeapi.Main without its exit, so TestMain can clean up after it.
func runWithServer(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), kubeapi.StartTimeout)
	s, err := kubeapi.StartMain(ctx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "start test kube-apiserver: %v\n", err)
		return 1
	}
	srv = s
	defer s.Stop()
	return m.Run()
}

// runWmcon runs the command line as the wmcon binary would and returns its exit code and output.
func runWmcon(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := NewRootCommand(&out, &errOut, testDemo)
	root.SetArgs(args)
	code = 0
	if err := root.ExecuteContext(context.Background()); err != nil {
		errOut.WriteString("wmcon: " + err.Error() + "\n")
		code = exitCode(err)
	}
	return code, out.String(), errOut.String()
}
