package remote

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// Client is one Windows host: a single SSH connection, dialled on first use, shared by concurrent
// sessions, closed when idle, checked with keepalives, and redialled when it died.
type Client struct {
	pool   *Pool
	target Target
	route  route

	mu     sync.Mutex
	conn   *connection
	active int // operations using conn
	idle   *time.Timer
	shell  Shell // detected once per host; a reboot does not change it

	shellRenameOnly bool // tests: rename uploads with Move-Item as on a server without posix-rename

	roundTrips atomic.Int64
	dials      atomic.Int64
}

// connection is one live SSH connection (with its bastion chain) and its lazily opened SFTP client.
type connection struct {
	chain *chain
	dead  chan struct{} // closed when the connection ends, for whatever reason

	sftpMu sync.Mutex
	sftp   *sftp.Client
}

func newClient(p *Pool, t Target, r route) *Client {
	return &Client{pool: p, target: t, route: r}
}

// Name is the node name, or the address when the node has none.
func (c *Client) Name() string {
	if c.target.Node != "" {
		return c.target.Node
	}
	return c.route.addr
}

// Addr is the address dialled ("ip:port").
func (c *Client) Addr() string { return c.route.addr }

// User is the user the client logs in as (the target's, ssh_config's, or the default).
func (c *Client) User() string { return c.route.user }

// Stats counts what the client did, for benchmarks and tests.
type Stats struct {
	RoundTrips int64 // commands sent (one SSH exec session each)
	Dials      int64 // connections opened
}

// Stats returns the counters.
func (c *Client) Stats() Stats {
	return Stats{RoundTrips: c.roundTrips.Load(), Dials: c.dials.Load()}
}

// Close closes the connection; the client dials again if used afterwards.
func (c *Client) Close() error {
	c.mu.Lock()
	conn := c.conn
	c.conn = nil
	c.mu.Unlock()
	if conn != nil {
		return conn.close()
	}
	return nil
}

func (k *connection) close() error {
	k.sftpMu.Lock()
	if k.sftp != nil {
		k.sftp.Close()
		k.sftp = nil
	}
	k.sftpMu.Unlock()
	return k.chain.Close()
}

func (k *connection) alive() bool {
	select {
	case <-k.dead:
		return false
	default:
		return true
	}
}

// acquire returns a live connection, dialling if needed, and holds it open until release.
func (c *Client) acquire(ctx context.Context) (*connection, func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.idle != nil {
		c.idle.Stop()
		c.idle = nil
	}
	if c.conn == nil || !c.conn.alive() {
		if c.conn != nil {
			c.conn.close()
			c.conn = nil
		}
		ch, err := c.pool.dial(ctx, c.route)
		if err != nil {
			c.armIdleLocked()
			return nil, nil, err
		}
		c.dials.Add(1)
		c.conn = c.watch(ch)
	}
	conn := c.conn
	c.active++
	var once sync.Once
	return conn, func() { once.Do(c.release) }, nil
}

func (c *Client) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.active--
	c.armIdleLocked()
}

// armIdleLocked closes the connection after IdleTimeout without use.
func (c *Client) armIdleLocked() {
	if c.active > 0 || c.conn == nil || c.pool.cfg.IdleTimeout < 0 {
		return
	}
	conn := c.conn
	c.idle = time.AfterFunc(c.pool.cfg.IdleTimeout, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.active == 0 && c.conn == conn {
			c.conn = nil
			conn.close()
		}
	})
}

// watch marks the connection dead when it ends and sends keepalives so a silent dead link (a host that
// rebooted, a NAT that forgot us) is noticed instead of hanging the next command.
func (c *Client) watch(ch *chain) *connection {
	conn := &connection{chain: ch, dead: make(chan struct{})}
	go func() {
		_ = ch.client.Wait()
		close(conn.dead)
	}()
	if every := c.pool.cfg.KeepaliveInterval; every > 0 {
		go keepalive(conn, every)
	}
	return conn
}

func keepalive(conn *connection, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-conn.dead:
			return
		case <-tick.C:
		}
		replied := make(chan error, 1)
		go func() {
			// Any reply, even a refusal, proves the link is alive.
			_, _, err := conn.chain.client.SendRequest("keepalive@openssh.com", true, nil)
			replied <- err
		}()
		select {
		case err := <-replied:
			if err != nil {
				conn.chain.Close()
				return
			}
		case <-time.After(every):
			conn.chain.Close()
			return
		case <-conn.dead:
			return
		}
	}
}

// Result is a finished command.
type Result struct {
	Stdout string
	Stderr string
	Exit   int
}

// Run sends one command (PowerShell syntax, built from COMMANDS.md shapes with Quote) and waits for it,
// bounded by Config.CommandTimeout. A non-zero exit is not an error here; see RunOK.
func (c *Client) Run(ctx context.Context, cmd string) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, c.pool.cfg.CommandTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	exit, err := c.exec(ctx, cmd, &stdout, &stderr)
	return Result{Stdout: stdout.String(), Stderr: stderr.String(), Exit: exit}, err
}

// RunOK runs a command and returns its stdout, or a *CommandError when it exits non-zero.
func (c *Client) RunOK(ctx context.Context, cmd string) (string, error) {
	res, err := c.Run(ctx, cmd)
	if err != nil {
		return "", err
	}
	if res.Exit != 0 {
		return res.Stdout, &CommandError{Host: c.Name(), Command: cmd, Exit: res.Exit, Stderr: res.Stderr}
	}
	return res.Stdout, nil
}

// Line is one line of output of a streamed command, without its line ending.
type Line struct {
	Text   string
	Stderr bool
}

// Stream runs a command and calls line for each output line as it arrives (never concurrently),
// until the command ends or ctx is cancelled. It returns the exit status.
func (c *Client) Stream(ctx context.Context, cmd string, line func(Line)) (int, error) {
	var mu sync.Mutex
	emit := func(l Line) { mu.Lock(); defer mu.Unlock(); line(l) }
	stdout, stderr := newLineWriter(false, emit), newLineWriter(true, emit)
	exit, err := c.exec(ctx, cmd, stdout, stderr)
	stdout.flush()
	stderr.flush()
	return exit, err
}

// exec runs cmd in a new session of the shared connection, in the host's shell.
func (c *Client) exec(ctx context.Context, cmd string, stdout, stderr io.Writer) (int, error) {
	shell, err := c.detectShell(ctx)
	if err != nil {
		return -1, err
	}
	return c.execRaw(ctx, shell.wrap(cmd), stdout, stderr)
}

func (c *Client) execRaw(ctx context.Context, line string, stdout, stderr io.Writer) (int, error) {
	conn, release, err := c.acquire(ctx)
	if err != nil {
		return -1, err
	}
	defer release()
	sess, err := newSession(ctx, conn)
	if err != nil {
		if ctx.Err() != nil {
			return -1, ctx.Err()
		}
		// The command was not sent yet, so one redial is safe.
		release()
		if conn, release, err = c.redial(ctx, conn); err != nil {
			return -1, err
		}
		defer release()
		if sess, err = newSession(ctx, conn); err != nil {
			return -1, &ConnectionLostError{Host: c.Name(), Err: err}
		}
	}
	defer sess.Close()
	sess.Stdout, sess.Stderr = stdout, stderr
	c.roundTrips.Add(1)
	if err := sess.Start(line); err != nil {
		return -1, &ConnectionLostError{Host: c.Name(), Err: err}
	}
	return c.wait(ctx, sess, conn)
}

// redial drops a connection that refused a new session and opens another.
func (c *Client) redial(ctx context.Context, bad *connection) (*connection, func(), error) {
	c.mu.Lock()
	if c.conn == bad {
		c.conn = nil
		bad.close()
	}
	c.mu.Unlock()
	return c.acquire(ctx)
}

func (c *Client) wait(ctx context.Context, sess *ssh.Session, conn *connection) (int, error) {
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	select {
	case err := <-done:
		return c.exitStatus(err)
	case <-ctx.Done():
		// Closing the session ends the remote command (Windows OpenSSH kills the process tree).
		sess.Close()
		<-done
		return -1, fmt.Errorf("%s: %w", c.Name(), ctx.Err())
	case <-conn.dead:
		<-done
		return -1, &ConnectionLostError{Host: c.Name(), Err: io.ErrUnexpectedEOF}
	}
}

func (c *Client) exitStatus(err error) (int, error) {
	var exitErr *ssh.ExitError
	var missing *ssh.ExitMissingError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exitErr):
		return exitErr.ExitStatus(), nil
	case errors.As(err, &missing):
		return -1, &ConnectionLostError{Host: c.Name(), Err: err}
	default:
		return -1, &ConnectionLostError{Host: c.Name(), Err: err}
	}
}

// lineWriter cuts a byte stream into lines.
type lineWriter struct {
	stderr  bool
	emit    func(Line)
	pending []byte
}

func newLineWriter(stderr bool, emit func(Line)) *lineWriter {
	return &lineWriter{stderr: stderr, emit: emit}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.pending = append(w.pending, p...)
	for {
		i := bytes.IndexByte(w.pending, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.emit(Line{Text: strings.TrimSuffix(string(w.pending[:i]), "\r"), Stderr: w.stderr})
		w.pending = w.pending[i+1:]
	}
}

func (w *lineWriter) flush() {
	if len(w.pending) > 0 {
		w.emit(Line{Text: strings.TrimSuffix(string(w.pending), "\r"), Stderr: w.stderr})
		w.pending = nil
	}
}

// lines splits command output into lines without line endings and without a final empty line.
func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		out = append(out, strings.TrimSuffix(sc.Text(), "\r"))
	}
	return out
}

// Connected reports whether a live connection is open (it is closed when idle).
func (c *Client) Connected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn != nil && c.conn.alive()
}

// newSession opens a session, giving up when ctx ends or the connection dies. x/crypto's NewSession
// waits forever for the reply to its channel request when it is sent in the moment the connection is
// dropped (after the mux has closed its channels, before it closes the socket): neither a context nor
// closing the client is guaranteed to wake it, so the connection's end must. A late session is closed
// when it arrives.
func newSession(ctx context.Context, conn *connection) (*ssh.Session, error) {
	return openSession(ctx, conn.chain.client, conn.dead)
}

// sessionOpener is what openSession needs of an *ssh.Client.
type sessionOpener interface {
	NewSession() (*ssh.Session, error)
}

func openSession(ctx context.Context, client sessionOpener, dead <-chan struct{}) (*ssh.Session, error) {
	type result struct {
		sess *ssh.Session
		err  error
	}
	done := make(chan result, 1)
	go func() {
		s, err := client.NewSession()
		done <- result{s, err}
	}()
	abandon := func() {
		go func() {
			if r := <-done; r.sess != nil {
				r.sess.Close()
			}
		}()
	}
	select {
	case r := <-done:
		return r.sess, r.err
	case <-ctx.Done():
		abandon()
		return nil, ctx.Err()
	case <-dead:
		abandon()
		return nil, errConnectionEnded
	}
}

// errConnectionEnded is a session refused because its connection ended meanwhile.
var errConnectionEnded = errors.New("the SSH connection ended while a session was being opened")
