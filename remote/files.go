package remote

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pkg/sftp"

	"github.com/wmcon/wmcon/localfile"
)

// Upload is one file to put on a host: from a local file or from memory.
type Upload struct {
	Remote string // Windows path, e.g. C:\k\kubelet.exe
	Local  string // local file to send, or
	Data   []byte // contents to send when Local is ""
}

// UploadOptions tune Upload.
type UploadOptions struct {
	Parallel int                     // files sent at once over the one connection (default 4)
	Progress func(done, total int64) // bytes sent so far over all files (skipped files count as done)
	Force    bool                    // send even when the host already has the same content
	// Sent, when set, is called as each file lands in place (from the sending goroutine).
	Sent func(remote string, size int64)
}

// UploadReport says what Upload did.
type UploadReport struct {
	Uploaded []string // Remote paths written
	Skipped  []string // Remote paths whose SHA-256 already matched
	Bytes    int64    // bytes sent
}

// Upload puts files on the host. A file whose SHA-256 already matches is skipped. Each file is written
// to a temporary name next to its target and renamed into place, so an interrupted transfer never leaves
// a truncated target: the old file stays until the new one is complete.
//
// The rename uses SFTP posix-rename@openssh.com when the server offers it (atomic replace, no extra
// command) and `Move-Item -Force` otherwise.
func (c *Client) Upload(ctx context.Context, files []Upload, opts UploadOptions) (UploadReport, error) {
	if err := c.changing("upload files"); err != nil {
		return UploadReport{}, err
	}
	conn, release, err := c.acquire(ctx)
	if err != nil {
		return UploadReport{}, err
	}
	defer release()
	client, err := conn.sftpClient()
	if err != nil {
		return UploadReport{}, &ConnectionLostError{Host: c.Name(), Err: fmt.Errorf("start SFTP: %w", err)}
	}
	total, err := totalSize(files)
	if err != nil {
		return UploadReport{}, err
	}
	u := &uploader{c: c, sftp: client, opts: opts, total: total}
	return u.run(ctx, files)
}

type uploader struct {
	c     *Client
	sftp  *sftp.Client
	opts  UploadOptions
	total int64
	done  int64 // guarded by mu

	mu     sync.Mutex
	report UploadReport
}

func (u *uploader) run(ctx context.Context, files []Upload) (UploadReport, error) {
	parallel := u.opts.Parallel
	if parallel <= 0 {
		parallel = 4
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan Upload)
	errs := make(chan error, len(files))
	var wg sync.WaitGroup
	for i := 0; i < min(parallel, len(files)); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				if err := u.one(ctx, f); err != nil {
					errs <- fmt.Errorf("upload %s to %s: %w", f.Remote, u.c.Name(), err)
					cancel()
				}
			}
		}()
	}
feed:
	for _, f := range files {
		select {
		case work <- f:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return u.report, err
	}
	if err := ctx.Err(); err != nil && len(files) > 0 {
		return u.report, err
	}
	return u.report, nil
}

func (u *uploader) one(ctx context.Context, f Upload) error {
	src, size, err := open(f)
	if err != nil {
		return err
	}
	defer src.Close()
	if !u.opts.Force {
		same, err := u.sameContent(ctx, f, src)
		if err != nil {
			return err
		}
		if same {
			u.progress(size)
			u.record(func(r *UploadReport) { r.Skipped = append(r.Skipped, f.Remote) })
			return nil
		}
	}
	if err := u.send(ctx, src, f.Remote); err != nil {
		return err
	}
	u.record(func(r *UploadReport) { r.Uploaded = append(r.Uploaded, f.Remote); r.Bytes += size })
	if u.opts.Sent != nil {
		u.opts.Sent(f.Remote, size)
	}
	return nil
}

// sameContent compares the local SHA-256 with Get-FileHash on the host (a missing file differs).
func (u *uploader) sameContent(ctx context.Context, f Upload, src io.ReadSeeker) (bool, error) {
	h := sha256.New()
	if _, err := io.Copy(h, src); err != nil {
		return false, err
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return false, err
	}
	remote, err := u.c.FileHash(ctx, f.Remote)
	if err != nil {
		return false, err
	}
	return strings.EqualFold(remote, hex.EncodeToString(h.Sum(nil))), nil
}

func (u *uploader) send(ctx context.Context, src io.Reader, target string) error {
	dst := SFTPPath(target)
	if err := u.sftp.MkdirAll(path.Dir(dst)); err != nil {
		return fmt.Errorf("create directory %s: %w", path.Dir(dst), u.c.transferErr(err))
	}
	tmp := dst + ".wmcon-" + randomSuffix() + ".tmp"
	if err := u.write(ctx, src, tmp); err != nil {
		_ = u.sftp.Remove(tmp) // best effort: the connection may be gone
		return err
	}
	if err := u.rename(ctx, tmp, dst); err != nil {
		_ = u.sftp.Remove(tmp)
		return err
	}
	return nil
}

func (u *uploader) write(ctx context.Context, src io.Reader, tmp string) error {
	file, err := u.sftp.Create(tmp)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, u.c.transferErr(err))
	}
	stop := context.AfterFunc(ctx, func() { file.Close() })
	defer stop()
	_, err = file.ReadFromWithConcurrency(&progressReader{r: src, add: u.progress}, 64)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", tmp, u.c.transferErr(err))
	}
	return nil
}

func (u *uploader) rename(ctx context.Context, tmp, dst string) error {
	if _, ok := u.sftp.HasExtension("posix-rename@openssh.com"); ok && !u.c.shellRenameOnly {
		if err := u.sftp.PosixRename(tmp, dst); err != nil {
			return fmt.Errorf("rename into place: %w", u.c.transferErr(err))
		}
		return nil
	}
	_, err := u.c.RunOK(ctx, cmdMoveItem(WindowsPath(tmp), WindowsPath(dst)))
	return err
}

// progress adds n bytes and reports under the lock, so the callback sees a growing count.
func (u *uploader) progress(n int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.done += n
	if u.opts.Progress != nil {
		u.opts.Progress(u.done, u.total)
	}
}

func (u *uploader) record(f func(*UploadReport)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	f(&u.report)
}

type progressReader struct {
	r   io.Reader
	add func(int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.add(int64(n))
	}
	return n, err
}

type readSeekCloser interface {
	io.ReadSeeker
	io.Closer
}

func open(f Upload) (readSeekCloser, int64, error) {
	if f.Local == "" {
		return nopCloser{bytes.NewReader(f.Data)}, int64(len(f.Data)), nil
	}
	file, err := localfile.Open(f.Local, localfile.MaxPayload)
	if err != nil {
		return nil, 0, err
	}
	return file, file.Size, nil
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

func totalSize(files []Upload) (int64, error) {
	var total int64
	for _, f := range files {
		if f.Local == "" {
			total += int64(len(f.Data))
			continue
		}
		st, err := os.Stat(f.Local)
		if err != nil {
			return 0, fmt.Errorf("upload %s: %w", f.Remote, err)
		}
		total += st.Size()
	}
	return total, nil
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// SFTPPath is the path Windows OpenSSH's sftp-server uses for a Windows path: C:\k\x → /C:/k/x.
// A path already in slash form (a POSIX server in tests) is kept.
func SFTPPath(winPath string) string {
	if strings.HasPrefix(winPath, "/") {
		return winPath
	}
	return "/" + strings.ReplaceAll(winPath, `\`, "/")
}

// WindowsPath is the inverse of SFTPPath: /C:/k/x → C:\k\x. A POSIX path is kept.
func WindowsPath(p string) string {
	if len(p) >= 3 && p[0] == '/' && p[2] == ':' {
		return strings.ReplaceAll(p[1:], "/", `\`)
	}
	return p
}

func (k *connection) sftpClient() (*sftp.Client, error) {
	k.sftpMu.Lock()
	defer k.sftpMu.Unlock()
	if k.sftp != nil {
		return k.sftp, nil
	}
	client, err := sftp.NewClient(k.chain.client, sftp.UseConcurrentWrites(true), sftp.MaxConcurrentRequestsPerFile(64))
	if err != nil {
		return nil, err
	}
	k.sftp = client
	return client, nil
}

// transferErr marks an SFTP failure caused by the connection ending as ErrConnectionLost.
func (c *Client) transferErr(err error) error {
	c.mu.Lock()
	conn := c.conn
	c.mu.Unlock()
	if conn == nil || !conn.alive() || strings.Contains(err.Error(), "connection lost") || brokenTransport(err) {
		if conn != nil {
			conn.settleAfterLoss()
		}
		return &ConnectionLostError{Host: c.Name(), Err: err}
	}
	return err
}

// settleAfterLoss runs after a transfer lost its link, so that the next call does not take the same
// broken path: the connection's watcher notices a closed TCP connection a moment after the transfer
// does (wait for it, briefly, so acquire dials anew); if the connection lives on, only the SFTP
// session ended, and the next transfer opens another instead of reusing the dead client.
func (k *connection) settleAfterLoss() {
	select {
	case <-k.dead:
		return
	case <-time.After(time.Second):
	}
	k.sftpMu.Lock()
	k.sftp = nil // not closed: another transfer may still hold it, and the connection's end closes it
	k.sftpMu.Unlock()
}

// brokenTransport recognises a write or read on a TCP connection the host closed. The connection's watcher
// notices the close a moment later, so a transfer that fails first must tell by its own error.
func brokenTransport(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed)
}

// Download copies a file from the host to w.
func (c *Client) Download(ctx context.Context, remotePath string, w io.Writer, progress func(int64)) error {
	conn, release, err := c.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	client, err := conn.sftpClient()
	if err != nil {
		return &ConnectionLostError{Host: c.Name(), Err: err}
	}
	file, err := client.Open(SFTPPath(remotePath))
	if err != nil {
		return fmt.Errorf("download %s from %s: %w", remotePath, c.Name(), c.transferErr(err))
	}
	defer file.Close()
	stop := context.AfterFunc(ctx, func() { file.Close() })
	defer stop()
	var done int64
	counted := writerFunc(func(b []byte) (int, error) {
		n, err := w.Write(b)
		done += int64(n)
		if progress != nil {
			progress(done)
		}
		return n, err
	})
	if _, err := file.WriteTo(counted); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("download %s from %s: %w", remotePath, c.Name(), c.transferErr(err))
	}
	return nil
}

// DownloadFile downloads to a local file through a temporary name, so a failed download leaves no
// partial file.
func (c *Client) DownloadFile(ctx context.Context, remotePath, localPath string, progress func(int64)) error {
	tmp, err := os.CreateTemp(path.Dir(localPath), ".wmcon-download-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := c.Download(ctx, remotePath, tmp, progress); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), localPath)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// FileHash is the upper-case hex SHA-256 of a file on the host, "" when it does not exist.
func (c *Client) FileHash(ctx context.Context, winPath string) (string, error) {
	res, err := c.Run(ctx, cmdFileHash(winPath))
	if err != nil {
		return "", err
	}
	if res.Exit != 0 {
		return "", nil // Get-FileHash fails for a missing file; the upload decides
	}
	return strings.TrimSpace(res.Stdout), nil
}

// Exists runs Test-Path.
func (c *Client) Exists(ctx context.Context, winPath string) (bool, error) {
	out, err := c.RunOK(ctx, cmdTestPath(winPath))
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(out) == "True", nil
}

// MakeDir creates a directory and its parents (no error when it exists).
func (c *Client) MakeDir(ctx context.Context, winPath string) error {
	if err := c.changing("create a directory"); err != nil {
		return err
	}
	_, err := c.RunOK(ctx, cmdMakeDir(winPath))
	return err
}

// Remove deletes a file, or a directory with everything in it when recurse is set.
func (c *Client) Remove(ctx context.Context, winPath string, recurse bool) error {
	if err := c.changing("remove files"); err != nil {
		return err
	}
	_, err := c.RunOK(ctx, cmdRemoveItem(winPath, recurse))
	return err
}

// ListDir returns the names in a directory.
func (c *Client) ListDir(ctx context.Context, winPath string) ([]string, error) {
	out, err := c.RunOK(ctx, cmdListDir(winPath))
	if err != nil {
		return nil, err
	}
	return lines(out), nil
}
