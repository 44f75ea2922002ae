package remote

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"

	"github.com/wmcon/wmcon/sim/windows"
)

func TestRunDetectsPowerShellOnceAndReusesTheConnection(t *testing.T) {
	h, c := simClient(t, windows.Options{Hostname: "WIN-TEST1"}, nil)
	ctx := testCtx(t)
	for i := 0; i < 3; i++ {
		name, err := c.Hostname(ctx)
		require.NoError(t, err)
		assert.Equal(t, "WIN-TEST1", name)
	}
	assert.Equal(t, 1, countCommand(h.Commands(), "Get-Help"), "shell detected once per host")
	assert.Equal(t, 3, countCommand(h.Commands(), "hostname"), "PowerShell commands sent as they are")
	assert.EqualValues(t, 1, c.Stats().Dials)
	assert.EqualValues(t, 4, c.Stats().RoundTrips)
	shell, err := c.Shell(ctx)
	require.NoError(t, err)
	assert.Equal(t, PowerShell, shell)
}

func TestCmdShellGetsEncodedCommands(t *testing.T) {
	h, c := simClient(t, windows.Options{Shell: "cmd", Hostname: "WIN-CMD"}, nil)
	ctx := testCtx(t)
	require.NoError(t, c.SetEnv(ctx, "WMCON_QUOTE", `it's "x" ‘y’ $env:PATH; Remove-Item C:\`))
	name, err := c.Hostname(ctx)
	require.NoError(t, err)
	assert.Equal(t, "WIN-CMD", name)
	v, ok := h.Env("WMCON_QUOTE")
	require.True(t, ok)
	assert.Equal(t, `it's "x" ‘y’ $env:PATH; Remove-Item C:\`, v)
	for _, cmd := range h.Commands()[1:] { // after Get-Help, everything travels encoded
		assert.True(t, strings.HasPrefix(cmd, "powershell.exe -NonInteractive -ExecutionPolicy Bypass -EncodedCommand "), cmd)
	}
	shell, _ := c.Shell(ctx)
	assert.Equal(t, Cmd, shell)
}

func TestQuotedValuesArriveIntact(t *testing.T) {
	h, c := simClient(t, windows.Options{}, nil)
	ctx := testCtx(t)
	values := []string{"plain", "it's", "‘curly’ ‚low‛", "$(Stop-Computer)", "a; b | c", "back`tick", ""}
	for _, v := range values {
		require.NoError(t, c.SetEnv(ctx, "WMCON_V", v))
		got, err := c.GetEnv(ctx, "WMCON_V")
		require.NoError(t, err)
		assert.Equal(t, v, got)
		hv, _ := h.Env("WMCON_V")
		assert.Equal(t, v, hv)
	}
	require.NoError(t, c.RemoveEnv(ctx, "WMCON_V"))
	_, ok := h.Env("WMCON_V")
	assert.False(t, ok)
}

func TestUnknownCommandIsAClearError(t *testing.T) {
	_, c := simClient(t, windows.Options{}, nil)
	_, err := c.RunOK(testCtx(t), "Frobnicate-Node -Now")
	var cmdErr *CommandError
	require.ErrorAs(t, err, &cmdErr)
	assert.True(t, cmdErr.UnknownCommand())
	assert.Contains(t, err.Error(), "does not know the command Frobnicate-Node")
}

func TestStreamDeliversLinesAsTheyCome(t *testing.T) {
	h, c := simClient(t, windows.Options{}, nil)
	ctx := testCtx(t)
	h.AppendLog(`C:\var\log\test\a.log`, "one", "two", "three")
	var got []string
	exit, err := c.Stream(ctx, cmdTailOnce(`C:\var\log\test\a.log`, 2), func(l Line) {
		if !l.Stderr {
			got = append(got, l.Text)
		}
	})
	require.NoError(t, err)
	assert.Equal(t, 0, exit)
	assert.Equal(t, []string{"two", "three"}, got)
}

func TestDropMidCommandIsConnectionLostAndNextCallRedials(t *testing.T) {
	h, c := simClient(t, windows.Options{}, nil)
	ctx := testCtx(t)
	path := `C:\var\log\test\follow.log`
	h.AppendLog(path, "first")
	started := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		_, err := c.Stream(ctx, cmdFollow(path, 0), func(l Line) {
			if l.Text == "first" {
				close(started)
			}
		})
		errc <- err
	}()
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("follow never delivered its first line")
	}
	h.DropConnections()
	select {
	case err := <-errc:
		assert.ErrorIs(t, err, ErrConnectionLost)
		assert.Contains(t, err.Error(), "winworker-a")
	case <-ctx.Done():
		t.Fatal("a dropped connection left the stream hanging")
	}
	_, err := c.Hostname(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 2, c.Stats().Dials)
}

func TestLatencyAndCommandTimeout(t *testing.T) {
	h, c := simClient(t, windows.Options{Hostname: "SLOW"}, nil)
	ctx := testCtx(t)
	h.SetLatency(50 * time.Millisecond)
	name, err := c.Hostname(ctx)
	require.NoError(t, err, "latency slows commands down but they still work")
	assert.Equal(t, "SLOW", name)

	h.SetLatency(time.Second)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = c.Hostname(short)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), err)
}

func TestIdleConnectionIsClosedAndRedialled(t *testing.T) {
	_, c := simClient(t, windows.Options{}, func(cfg *Config) { cfg.IdleTimeout = 30 * time.Millisecond })
	ctx := testCtx(t)
	_, err := c.Hostname(ctx)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return !c.Connected() }, 10*time.Second, 10*time.Millisecond)
	_, err = c.Hostname(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 2, c.Stats().Dials)
}

// blockedOpener is an *ssh.Client whose channel request was sent as the connection dropped: x/crypto
// never answers it.
type blockedOpener struct{}

func (blockedOpener) NewSession() (*ssh.Session, error) { select {} }

// TestSessionRequestLostWithItsConnectionEnds: a session asked for in the moment the connection drops
// is given up when the connection ends, not when the caller's context does, so the next call redials
// at once (it hung for the test's whole deadline under load before).
func TestSessionRequestLostWithItsConnectionEnds(t *testing.T) {
	dead := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		_, err := openSession(context.Background(), blockedOpener{}, dead)
		errc <- err
	}()
	close(dead)
	select {
	case err := <-errc:
		assert.ErrorIs(t, err, errConnectionEnded)
	case <-time.After(10 * time.Second):
		t.Fatal("the session request outlived its connection")
	}
}
