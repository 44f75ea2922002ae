package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/payload"
)

// TestKubeconfigThatIsNotAFileIsRefused: a device would be read until memory runs out and a FIFO would
// block forever; both are refused with a sentence naming the path.
func TestKubeconfigThatIsNotAFileIsRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "kubeconfig-fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for _, path := range []string{"/dev/zero", fifo} {
		code, _, errOut := runWmcon(t, "--kubeconfig", path, "hostkey", "forget", "x")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, errOut, path+" is not a regular file")
	}
	t.Setenv("KUBECONFIG", "/dev/zero")
	code, _, errOut := runWmcon(t, "hostkey", "forget", "x")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "/dev/zero is not a regular file")
}

// runWmconWithin is runWmcon that fails the test, instead of hanging it, when the command does not end
// within d (a read blocked on a FIFO would never end).
func runWmconWithin(t *testing.T, d time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		c, o, e := runWmcon(t, args...)
		done <- result{c, o, e}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.err
	case <-time.After(d):
		t.Fatalf("wmcon %v did not end within %s", args, d)
		return 0, "", ""
	}
}

// oddFiles are paths a user might name by mistake — a device that never ends, a FIFO nobody writes, and a
// sparse regular file of 1 GiB (no disk space used) — each with the pattern of its refusal.
func oddFiles(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	t.Cleanup(func() { // a reader that did block would be released, so the test's own cleanup ends
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	huge := filepath.Join(dir, "huge")
	f, err := os.Create(huge)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<30))
	require.NoError(t, f.Close())
	return map[string]string{
		"/dev/zero": `is not a regular file \(a character device\): give the path of a file`,
		fifo:        `is not a regular file \(a named pipe\): give the path of a file`,
		huge:        `is larger than wmcon reads for it \(1 GiB, at most \d+ [KM]iB\): this is not the file expected; check the path`,
	}
}

// TestUserNamedFilesAreReadBounded: mirrors render -f and --pull-secret, and key create --from-file refuse a
// device, a FIFO and a file far larger than any real one, at once and naming the file, the limit and what
// to do, instead of reading until memory runs out or blocking where no signal ends the process.
func TestUserNamedFilesAreReadBounded(t *testing.T) {
	for path, want := range oddFiles(t) {
		for _, args := range [][]string{
			{"mirrors", "render", "-f", path, "-o", t.TempDir()},
			{"mirrors", "render", "-f", "../testdata/mirrorsets/disconnected.yaml", "--pull-secret", path, "-o", t.TempDir()},
			{"key", "create", "--from-file", path},
		} {
			code, _, errOut := runWmconWithin(t, 30*time.Second, args...)
			assert.Equal(t, ExitFailed, code, "%v", args)
			assert.Regexp(t, regexp.QuoteMeta(path)+" "+want, errOut, "%v", args)
		}
	}
}

// TestKeyWithTextAroundItIsRefused: key create stores the file as it is, so a valid key with anything
// around it (here 100 KB of it) is refused rather than sent to the cluster with the key.
func TestKeyWithTextAroundItIsRefused(t *testing.T) {
	key, err := os.ReadFile("../testdata/keys/userdata-test-key")
	require.NoError(t, err)
	junk := make([]byte, 100<<10)
	for i := range junk {
		junk[i] = 'x'
	}
	for name, content := range map[string][]byte{
		"before": append(append([]byte{}, junk...), key...),
		"after":  append(append([]byte{}, key...), junk...),
	} {
		path := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.WriteFile(path, content, 0o600))
		code, _, errOut := runWmcon(t, kubeconfigArgs(t, "key", "create", "--from-file", path, "--yes")...)
		assert.Equal(t, ExitFailed, code, name)
		assert.Contains(t, errOut, "text "+name+" the key's", name)
		assert.Contains(t, errOut, "holds the private key alone", name)
	}
}

// TestPayloadFilesAreReadBounded: a payload whose sha256sum, or one of whose files, is a device or a FIFO
// is refused when it is loaded (configure --dry-run of the fresh demo's bare host), at once and naming the file; sha256sum on
// /dev/zero once failed with "token too long", and a FIFO there hung the process past SIGTERM.
func TestPayloadFilesAreReadBounded(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	t.Cleanup(func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	for _, tc := range []struct{ replace, with, want string }{
		{payload.SumsFile, "/dev/zero", "is not a regular file (a character device)"},
		{payload.SumsFile, fifo, "is not a regular file (a named pipe)"},
		{"kube-node/kubelet.exe", "/dev/zero", "is not a regular file (a character device)"},
		{"kube-node/kubelet.exe", fifo, "is not a regular file (a named pipe)"},
	} {
		dir := t.TempDir()
		require.NoError(t, payload.WriteSynthetic(dir, []string{"kube-node/kubelet.exe", "kube-node/kube-proxy.exe"}))
		target := filepath.Join(dir, filepath.FromSlash(tc.replace))
		require.NoError(t, os.Remove(target))
		require.NoError(t, os.Symlink(tc.with, target))
		code, out, errOut := runWmconWithin(t, 60*time.Second, "--demo=fresh", "configure", "--address", "127.0.0.7", "--payload", dir, "--dry-run")
		assert.Equal(t, ExitFailed, code, "%s → %s\n%s", tc.replace, tc.with, out)
		assert.Contains(t, out+errOut, target+" "+tc.want, "%s → %s", tc.replace, tc.with)
	}
}
