package windows

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// serverVersion is what Windows Server 2022's OpenSSH announces.
const serverVersion = "SSH-2.0-OpenSSH_for_Windows_8.1"

func (h *Host) acceptLoop(l net.Listener) {
	defer h.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			return // listener closed: shutdown, reboot or Close
		}
		if !h.track(c) {
			c.Close()
			continue
		}
		h.wg.Add(1)
		go h.handleConn(c)
	}
}

func (h *Host) track(c net.Conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.up || h.closed {
		return false
	}
	h.conns[c] = struct{}{}
	return true
}

func (h *Host) untrack(c net.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.conns, c)
}

func (h *Host) serverConfig() *ssh.ServerConfig {
	h.mu.Lock()
	signer := h.hostKey
	h.mu.Unlock()
	cfg := &ssh.ServerConfig{
		ServerVersion:     serverVersion,
		PublicKeyCallback: h.checkKey,
		// No PasswordCallback and no KeyboardInteractiveCallback: like sshd with
		// PasswordAuthentication no, only public keys are offered.
	}
	cfg.AddHostKey(signer)
	return cfg
}

// checkKey accepts the configured user (case-insensitively, as Windows does) with an authorized key.
func (h *Host) checkKey(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
	h.mu.Lock()
	refuse := h.refuseAuth
	h.mu.Unlock()
	if refuse || !strings.EqualFold(meta.User(), h.opts.User) {
		return nil, errors.New("permission denied")
	}
	for _, k := range h.opts.AuthorizedKeys {
		if bytes.Equal(k.Marshal(), key.Marshal()) {
			return &ssh.Permissions{}, nil
		}
	}
	return nil, errors.New("permission denied")
}

func (h *Host) handleConn(c net.Conn) {
	defer h.wg.Done()
	defer h.untrack(c)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	sc, chans, reqs, err := ssh.NewServerConn(c, h.serverConfig())
	if err != nil {
		return
	}
	_ = c.SetDeadline(time.Time{})
	defer sc.Close()
	go h.answerGlobal(reqs)
	var sessions sync.WaitGroup
	for nc := range chans {
		if nc.ChannelType() == "direct-tcpip" {
			sessions.Add(1)
			go func() {
				defer sessions.Done()
				h.forward(nc)
			}()
			continue
		}
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only session and direct-tcpip channels are supported")
			continue
		}
		sessions.Add(1)
		go func() {
			defer sessions.Done()
			h.handleSession(nc, c)
		}()
	}
	sessions.Wait()
}

// answerGlobal replies to global requests; OpenSSH answers keepalive@openssh.com with a failure
// message, which is all a client needs to know the connection is alive.
func (h *Host) answerGlobal(reqs <-chan *ssh.Request) {
	for r := range reqs {
		if r.WantReply {
			_ = r.Reply(false, nil)
		}
	}
}

func (h *Host) handleSession(nc ssh.NewChannel, conn net.Conn) {
	ch, reqs, err := nc.Accept()
	if err != nil {
		return
	}
	defer ch.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := h.newSessionOutput(ch, conn)
	var running sync.WaitGroup
	started := false
	for r := range reqs {
		switch {
		case r.Type == "exec" && !started:
			started = true
			cmd, ok := parseStringPayload(r.Payload)
			_ = r.Reply(ok, nil)
			if !ok {
				return
			}
			running.Add(1)
			go func() {
				defer running.Done()
				h.runExec(ctx, ch, out, cmd)
			}()
		case r.Type == "subsystem" && !started:
			name, _ := parseStringPayload(r.Payload)
			if name != "sftp" {
				_ = r.Reply(false, nil)
				continue
			}
			started = true
			_ = r.Reply(true, nil)
			running.Add(1)
			go func() {
				defer running.Done()
				h.serveSFTP(ch, out)
			}()
		default: // env, pty-req, shell, keepalive@openssh.com, signal...: answered, not supported
			if r.WantReply {
				_ = r.Reply(false, nil)
			}
		}
	}
	cancel() // the client closed the session: stop a follow (Get-Content -Wait)
	running.Wait()
}

func parseStringPayload(p []byte) (string, bool) {
	var s struct{ Value string }
	if err := ssh.Unmarshal(p, &s); err != nil {
		return "", false
	}
	return s.Value, true
}

func (h *Host) runExec(ctx context.Context, ch ssh.Channel, out *sessionOutput, cmd string) {
	h.mu.Lock()
	h.commands = append(h.commands, cmd)
	h.mu.Unlock()
	h.activeExecs.Add(1)
	defer h.activeExecs.Add(-1)
	s := &shellSession{h: h, ctx: ctx, stdout: out.stdout, stderr: out.stderr}
	code := s.runCommandLine(cmd)
	out.wait()
	_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(code)}))
	_ = ch.CloseWrite()
	_ = ch.Close()
}

// sessionOutput is what a session sends: stdout and stderr share the latency and the byte budget of
// DropAfterBytes.
type sessionOutput struct {
	h      *Host
	conn   net.Conn
	mu     sync.Mutex
	budget int64 // <0: unlimited
	stdout io.Writer
	stderr io.Writer
}

func (h *Host) newSessionOutput(ch ssh.Channel, conn net.Conn) *sessionOutput {
	o := &sessionOutput{h: h, conn: conn, budget: h.takeDropBudget()}
	o.stdout = &faultWriter{o: o, w: ch}
	o.stderr = &faultWriter{o: o, w: ch.Stderr()}
	return o
}

// wait applies the latency before the exit status, so even a command without output is delayed.
func (o *sessionOutput) wait() {
	if d := o.h.currentLatency(); d > 0 {
		time.Sleep(d)
	}
}

type faultWriter struct {
	o *sessionOutput
	w io.Writer
}

var errConnectionCut = errors.New("winsim: connection cut by DropAfterBytes")

func (f *faultWriter) Write(p []byte) (int, error) {
	f.o.wait()
	f.o.mu.Lock()
	defer f.o.mu.Unlock()
	if f.o.budget < 0 {
		return f.w.Write(p)
	}
	if int64(len(p)) <= f.o.budget {
		f.o.budget -= int64(len(p))
		return f.w.Write(p)
	}
	n, _ := f.w.Write(p[:f.o.budget])
	f.o.budget = 0
	// Give the partial packet a moment to leave before the abrupt close, so the client sees a cut
	// transfer rather than nothing.
	time.Sleep(20 * time.Millisecond)
	f.o.conn.Close()
	return n, fmt.Errorf("%w after %d bytes", errConnectionCut, n)
}

// sftpChannel serves SFTP over the session with the fault-injecting writer.
type sftpChannel struct {
	io.Reader
	io.Writer
	io.Closer
}

func (h *Host) serveSFTP(ch ssh.Channel, out *sessionOutput) {
	rwc := sftpChannel{Reader: ch, Writer: out.stdout, Closer: ch}
	srv := sftp.NewRequestServer(rwc, h.sftpHandlers(), sftp.WithStartDirectory(sftpPath(h.home)))
	_ = srv.Serve()
	_ = srv.Close()
}
