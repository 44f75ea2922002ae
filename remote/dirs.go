package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pkg/sftp"
)

// DirInUseError says a directory could not be swapped because something on the host holds a file in it open
// (Windows refuses to rename a directory then). The old directory is still in place, unchanged.
type DirInUseError struct {
	Host, Dir string
	Tries     int
	Err       error
}

func (e *DirInUseError) Error() string {
	return fmt.Sprintf("%s: %s is in use (a process holds a file in it open) after %d tries; the previous content is "+
		"still in place, unchanged: retry, or find the process holding it (for example with Sysinternals handle.exe)",
		e.Host, e.Dir, e.Tries)
}

func (e *DirInUseError) Unwrap() error { return e.Err }

// ReplaceDirOptions tune ReplaceDir.
type ReplaceDirOptions struct {
	Tries      int           // swap attempts while the directory is in use (default 5)
	RetryDelay time.Duration // first wait between attempts, doubling (default 200ms)
	Progress   func(step string)
}

func (o *ReplaceDirOptions) applyDefaults() {
	if o.Tries <= 0 {
		o.Tries = 5
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = 200 * time.Millisecond
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
}

// ReplaceDir makes dir hold exactly files (paths relative to dir with \ separators → content). The new tree is
// written completely beside dir first, then swapped in with two renames on one command line, so a reader sees
// the old tree or the new one, never a half-written one. NTFS cannot exchange two directories atomically: for
// the instant between the renames dir is absent (a reader then finds no file, as on a node never configured).
// A directory some process holds open cannot be renamed on Windows: the swap is retried with backoff and, if
// it stays in use, given up with the old tree untouched and the staged copy removed (DirInUseError).
func (c *Client) ReplaceDir(ctx context.Context, dir string, files map[string][]byte, opts ReplaceDirOptions) error {
	if err := c.changing("replace " + dir); err != nil {
		return err
	}
	opts.applyDefaults()
	conn, release, err := c.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	client, err := conn.sftpClient()
	if err != nil {
		return &ConnectionLostError{Host: c.Name(), Err: fmt.Errorf("start SFTP: %w", err)}
	}
	suffix := randomSuffix()
	stage, old := dir+".new-"+suffix, dir+".old-"+suffix
	opts.Progress(fmt.Sprintf("writing %d files to %s", len(files), stage))
	exists, err := c.writeTree(ctx, client, dir, stage, files)
	if err != nil {
		c.removeQuietly(client, stage)
		return err
	}
	opts.Progress("swapping " + stage + " into " + dir)
	if err := c.swapDir(ctx, dir, stage, old, exists, opts); err != nil {
		c.restore(client, dir, old)
		c.removeQuietly(client, stage)
		return err
	}
	c.removeLeftovers(ctx, client, dir, opts)
	return nil
}

// removeLeftovers deletes the previous tree and any copies an interrupted earlier run left beside dir. A copy
// still held open stays until the next run; the swap itself already succeeded, so that is only reported.
func (c *Client) removeLeftovers(ctx context.Context, client *sftp.Client, dir string, opts ReplaceDirOptions) {
	parent, base := path.Split(SFTPPath(dir))
	entries, err := client.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base+".old-") && !strings.HasPrefix(name, base+".new-") {
			continue
		}
		leftover := WindowsPath(parent + name)
		if _, err := c.RunOK(ctx, cmdRemoveItem(leftover, true)); err != nil {
			opts.Progress(fmt.Sprintf("could not remove %s yet (%v); the next apply removes it", leftover, err))
		}
	}
}

// writeTree writes the files under stage (directories first, then the files, concurrently over the one SFTP
// session) and reports whether dir exists already.
func (c *Client) writeTree(ctx context.Context, client *sftp.Client, dir, stage string, files map[string][]byte) (bool, error) {
	dirs := map[string]bool{SFTPPath(stage): true}
	for rel := range files {
		if err := checkRelative(rel); err != nil {
			return false, err
		}
		dirs[path.Dir(SFTPPath(stage+`\`+rel))] = true
	}
	var exists bool
	err := parallel(ctx, len(dirs)+1, func(run func(func() error)) {
		run(func() error {
			_, err := client.Stat(SFTPPath(dir))
			exists = err == nil
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("look at %s: %w", dir, c.transferErr(err))
			}
			return nil
		})
		for d := range dirs {
			run(func() error { return c.mkdirAll(client, d) })
		}
	})
	if err != nil {
		return false, err
	}
	return exists, parallel(ctx, len(files), func(run func(func() error)) {
		for rel, data := range files {
			run(func() error { return c.writeFile(client, SFTPPath(stage+`\`+rel), data) })
		}
	})
}

func checkRelative(rel string) error {
	if rel == "" || strings.HasPrefix(rel, `\`) || strings.Contains(rel, ":") || strings.Contains(rel, "/") {
		return fmt.Errorf("file %q: use a relative path with \\ separators", rel)
	}
	for _, part := range strings.Split(rel, `\`) {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("file %q: empty, . and .. path components are not allowed", rel)
		}
	}
	return nil
}

func (c *Client) mkdirAll(client *sftp.Client, p string) error {
	if err := client.MkdirAll(p); err != nil {
		return fmt.Errorf("create directory %s: %w", WindowsPath(p), c.transferErr(err))
	}
	return nil
}

func (c *Client) writeFile(client *sftp.Client, p string, data []byte) error {
	f, err := client.Create(p)
	if err != nil {
		return fmt.Errorf("create %s: %w", WindowsPath(p), c.transferErr(err))
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", WindowsPath(p), c.transferErr(err))
	}
	return nil
}

// swapDir runs the swap, retrying while Windows says the directory is in use.
func (c *Client) swapDir(ctx context.Context, dir, stage, old string, exists bool, opts ReplaceDirOptions) error {
	cmd := cmdSwapDir(dir, stage, old, exists)
	delay := opts.RetryDelay
	var last error
	for try := 1; try <= opts.Tries; try++ {
		_, err := c.RunOK(ctx, cmd)
		if err == nil {
			return nil
		}
		var ce *CommandError
		if !errors.As(err, &ce) || !inUse(ce.Stderr) {
			return fmt.Errorf("swap %s into %s: %w", stage, dir, err)
		}
		last = err
		if try < opts.Tries {
			opts.Progress(fmt.Sprintf("%s is in use on the host; trying again in %s", dir, delay))
			if !sleep(ctx, delay) {
				return ctx.Err()
			}
			delay *= 2
		}
	}
	return &DirInUseError{Host: c.Name(), Dir: dir, Tries: opts.Tries, Err: last}
}

// inUse recognises Windows' refusal to move or delete something a process holds open.
func inUse(stderr string) bool {
	return strings.Contains(stderr, "is denied") || strings.Contains(stderr, "being used by another process")
}

// restore puts the old directory back if the swap stopped between its two renames. Best effort: the
// connection may be gone, and then the caller's error already says so.
func (c *Client) restore(client *sftp.Client, dir, old string) {
	if _, err := client.Stat(SFTPPath(old)); err != nil {
		return
	}
	if _, err := client.Stat(SFTPPath(dir)); err == nil {
		return
	}
	_ = client.Rename(SFTPPath(old), SFTPPath(dir))
}

func (c *Client) removeQuietly(client *sftp.Client, dir string) {
	_ = client.RemoveAll(SFTPPath(dir))
}

// ReadTree returns every file under dir (paths relative to dir with \ separators → content); a missing
// directory gives an empty map and exists false. At most 1,000 files of at most 1 MiB each are read.
func (c *Client) ReadTree(ctx context.Context, dir string) (files map[string][]byte, exists bool, err error) {
	conn, release, err := c.acquire(ctx)
	if err != nil {
		return nil, false, err
	}
	defer release()
	client, err := conn.sftpClient()
	if err != nil {
		return nil, false, &ConnectionLostError{Host: c.Name(), Err: fmt.Errorf("start SFTP: %w", err)}
	}
	r := &treeReader{c: c, client: client, root: SFTPPath(dir), files: map[string][]byte{}}
	if _, err := client.Stat(r.root); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return r.files, false, nil
		}
		return nil, false, fmt.Errorf("read %s: %w", dir, c.transferErr(err))
	}
	if err := r.walk(ctx, r.root); err != nil {
		return nil, true, err
	}
	return r.files, true, nil
}

type treeReader struct {
	c      *Client
	client *sftp.Client
	root   string
	mu     sync.Mutex
	files  map[string][]byte
	count  int
}

const (
	maxTreeFiles = 1000
	maxTreeFile  = 1 << 20
)

// walk lists a directory, then reads its files and walks its subdirectories concurrently.
func (r *treeReader) walk(ctx context.Context, dir string) error {
	entries, err := r.client.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("list %s: %w", WindowsPath(dir), r.c.transferErr(err))
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	return parallel(ctx, len(entries), func(run func(func() error)) {
		for _, e := range entries {
			p := path.Join(dir, e.Name())
			if e.IsDir() {
				run(func() error { return r.walk(ctx, p) })
				continue
			}
			run(func() error { return r.read(p, e.Size()) })
		}
	})
}

func (r *treeReader) read(p string, size int64) error {
	rel := strings.ReplaceAll(strings.TrimPrefix(p, r.root+"/"), "/", `\`)
	r.mu.Lock()
	r.count++
	tooMany := r.count > maxTreeFiles
	r.mu.Unlock()
	if tooMany {
		return fmt.Errorf("%s has more than %d files: not a registries directory wmcon wrote", WindowsPath(r.root), maxTreeFiles)
	}
	if size > maxTreeFile {
		return fmt.Errorf("%s is %d bytes: larger than a hosts.toml can be", WindowsPath(p), size)
	}
	f, err := r.client.Open(p)
	if err != nil {
		return fmt.Errorf("open %s: %w", WindowsPath(p), r.c.transferErr(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTreeFile+1))
	if err != nil {
		return fmt.Errorf("read %s: %w", WindowsPath(p), r.c.transferErr(err))
	}
	r.mu.Lock()
	r.files[rel] = data
	r.mu.Unlock()
	return nil
}

// parallel runs the jobs that add registers (at most 16 at once: the SFTP session pipelines them) and
// returns the first error.
func parallel(ctx context.Context, n int, add func(run func(func() error))) error {
	if n == 0 {
		return nil
	}
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	add(func(job func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			if err := job(); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	})
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}
