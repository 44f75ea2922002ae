package windows

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
)

// testTimeout bounds every wait so a broken simulator fails a test instead of hanging it.
const testTimeout = 10 * time.Second

type testHost struct {
	*Host
	signer ssh.Signer // the client's key, authorized on the host
}

func newSigner(t testing.TB) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	s, err := ssh.NewSignerFromKey(priv)
	require.NoError(t, err)
	return s
}

// startHost starts a host that authorizes a fresh client key and is closed when the test ends.
func startHost(t testing.TB, opts Options) *testHost {
	t.Helper()
	signer := newSigner(t)
	opts.AuthorizedKeys = append(opts.AuthorizedKeys, signer.PublicKey())
	if opts.LogInterval == 0 {
		opts.LogInterval = 20 * time.Millisecond
	}
	if opts.RebootDowntime == 0 {
		opts.RebootDowntime = 300 * time.Millisecond
	}
	if opts.ServicePending == 0 {
		opts.ServicePending = 20 * time.Millisecond
	}
	h, err := Start(opts)
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	return &testHost{Host: h, signer: signer}
}

func (th *testHost) clientConfig() *ssh.ClientConfig {
	return &ssh.ClientConfig{
		User:            "Administrator",
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(th.signer)},
		HostKeyCallback: ssh.FixedHostKey(th.HostKey()),
		Timeout:         testTimeout,
	}
}

func (th *testHost) dial(t testing.TB) *ssh.Client {
	t.Helper()
	c, err := ssh.Dial("tcp", th.Addr(), th.clientConfig())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

type result struct {
	stdout, stderr string
	code           int
}

// run executes one command line on a new session and returns its output and exit status.
func run(t testing.TB, c *ssh.Client, cmd string) result {
	t.Helper()
	r, err := tryRun(c, cmd)
	require.NoError(t, err, "command %q", cmd)
	return r
}

// tryRun bounds the whole exchange, NewSession included: x/crypto's NewSession can block forever on a
// connection whose peer has just closed it.
func tryRun(c *ssh.Client, cmd string) (result, error) {
	type outcome struct {
		r   result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := runSession(c, cmd)
		done <- outcome{r, err}
	}()
	select {
	case o := <-done:
		return o.r, o.err
	case <-time.After(testTimeout):
		return result{}, errors.New("command timed out")
	}
}

func runSession(c *ssh.Client, cmd string) (result, error) {
	s, err := c.NewSession()
	if err != nil {
		return result{}, err
	}
	defer s.Close()
	var out, errOut bytes.Buffer
	s.Stdout, s.Stderr = &out, &errOut
	err = s.Run(cmd)
	r := result{stdout: out.String(), stderr: errOut.String()}
	var exit *ssh.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitStatus()
	case err != nil:
		return r, err
	}
	return r, nil
}

// lines splits CRLF output into lines without the final empty one.
func lines(s string) []string {
	s = strings.TrimSuffix(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// eventually waits, bounded, for a condition the simulator reaches asynchronously.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// q is the client's quoting rule (remote.Quote), restated here so the simulator is tested on its own.
func q(s string) string { return quoteLiteral(s) }

func dialErr(th *testHost) error {
	c, err := ssh.Dial("tcp", th.Addr(), th.clientConfig())
	if err == nil {
		c.Close()
	}
	return err
}

func isRefused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
