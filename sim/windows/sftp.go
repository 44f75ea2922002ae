package windows

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/pkg/sftp"
)

// sftpPath is the form Windows OpenSSH's sftp-server uses: C:\k\x → /C:/k/x.
func sftpPath(winPath string) string {
	return "/" + strings.TrimSuffix(strings.ReplaceAll(winPath, `\`, "/"), "/")
}

// winPathOf maps an SFTP path back; "/" is the virtual root that lists the drives.
func (h *Host) winPathOf(p string) (string, bool, error) {
	if p == "/" || p == "" {
		return "", true, nil
	}
	w, err := cleanWinPath(p, h.home)
	if err != nil {
		return "", false, os.ErrNotExist
	}
	return w, false, nil
}

type sftpHandlers struct{ h *Host }

func (h *Host) sftpHandlers() sftp.Handlers {
	s := sftpHandlers{h: h}
	return sftp.Handlers{FileGet: s, FilePut: s, FileCmd: s, FileList: s}
}

// Fileread serves a snapshot of the file as it is when opened.
func (s sftpHandlers) Fileread(r *sftp.Request) (io.ReaderAt, error) {
	p, root, err := s.h.winPathOf(r.Filepath)
	if err != nil || root {
		return nil, os.ErrNotExist
	}
	data, err := s.h.fs.readFile(p)
	if err != nil {
		return nil, sftpErr(err)
	}
	return bytes.NewReader(data), nil
}

func (s sftpHandlers) Filewrite(r *sftp.Request) (io.WriterAt, error) {
	return s.open(r)
}

func (s sftpHandlers) OpenFile(r *sftp.Request) (sftp.WriterAtReaderAt, error) {
	return s.open(r)
}

func (s sftpHandlers) open(r *sftp.Request) (*sftpFile, error) {
	p, root, err := s.h.winPathOf(r.Filepath)
	if err != nil || root {
		return nil, os.ErrPermission
	}
	flags := r.Pflags()
	n, statErr := s.h.fs.stat(p)
	switch {
	case statErr == nil && n.dir:
		return nil, sftpErr(errIsDir)
	case statErr == nil && flags.Creat && flags.Excl:
		return nil, os.ErrExist
	case statErr != nil && !flags.Creat:
		return nil, os.ErrNotExist
	case statErr != nil || flags.Trunc:
		if err := s.h.fs.writeFile(p, nil, false); err != nil {
			return nil, sftpErr(err)
		}
	}
	return &sftpFile{fs: s.h.fs, path: p}, nil
}

// sftpFile writes straight into the simulated file, so a partial upload is visible, as on Windows.
type sftpFile struct {
	fs   *memFS
	path string
}

func (f *sftpFile) WriteAt(b []byte, off int64) (int, error) {
	if err := f.fs.writeAt(f.path, b, off); err != nil {
		return 0, sftpErr(err)
	}
	return len(b), nil
}

func (f *sftpFile) ReadAt(b []byte, off int64) (int, error) {
	data, err := f.fs.readFile(f.path)
	if err != nil {
		return 0, sftpErr(err)
	}
	return bytes.NewReader(data).ReadAt(b, off)
}

func (s sftpHandlers) Filecmd(r *sftp.Request) error {
	p, root, err := s.h.winPathOf(r.Filepath)
	if err != nil || root {
		return os.ErrPermission
	}
	switch r.Method {
	case "Setstat":
		if r.AttrFlags().Size {
			return sftpErr(s.h.fs.truncate(p, int64(r.Attributes().Size)))
		}
		return nil // times and modes: accepted and ignored, NTFS ACLs are not simulated
	case "Rename":
		return s.rename(p, r.Target, false)
	case "Mkdir":
		return sftpErr(s.h.fs.mkdir(p))
	case "Rmdir":
		n, err := s.h.fs.stat(p)
		if err == nil && !n.dir {
			return sftpErr(errNotDir)
		}
		return sftpErr(s.h.fs.remove(p, false))
	case "Remove":
		n, err := s.h.fs.stat(p)
		if err == nil && n.dir {
			return sftpErr(errIsDir)
		}
		return sftpErr(s.h.fs.remove(p, false))
	}
	return sftp.ErrSSHFxOpUnsupported // Link, Symlink
}

// PosixRename replaces an existing destination, as posix-rename@openssh.com does.
func (s sftpHandlers) PosixRename(r *sftp.Request) error {
	p, root, err := s.h.winPathOf(r.Filepath)
	if err != nil || root {
		return os.ErrPermission
	}
	return s.rename(p, r.Target, true)
}

func (s sftpHandlers) rename(from, target string, replace bool) error {
	to, root, err := s.h.winPathOf(target)
	if err != nil || root {
		return os.ErrPermission
	}
	return sftpErr(s.h.fs.rename(from, to, replace))
}

func (s sftpHandlers) Filelist(r *sftp.Request) (sftp.ListerAt, error) {
	p, root, err := s.h.winPathOf(r.Filepath)
	if err != nil {
		return nil, err
	}
	if root {
		return s.rootList(r.Method)
	}
	switch r.Method {
	case "List":
		nodes, err := s.h.fs.list(p)
		if err != nil {
			return nil, sftpErr(err)
		}
		infos := make(listerAt, len(nodes))
		for i, n := range nodes {
			infos[i] = fileInfo{n}
		}
		return infos, nil
	case "Stat", "Lstat":
		n, err := s.h.fs.stat(p)
		if err != nil {
			return nil, sftpErr(err)
		}
		return listerAt{fileInfo{n}}, nil
	}
	return nil, sftp.ErrSSHFxOpUnsupported
}

func (s sftpHandlers) rootList(method string) (sftp.ListerAt, error) {
	drive, _ := s.h.fs.stat(`C:\`)
	if method == "List" {
		return listerAt{fileInfo{drive}}, nil
	}
	return listerAt{fileInfo{fsNode{path: "/", dir: true, modTime: drive.modTime}}}, nil
}

// sftpErr maps file-system errors onto the SFTP status codes pkg/sftp derives from os errors.
func sftpErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return os.ErrNotExist
	case errors.Is(err, fs.ErrExist):
		return os.ErrExist
	case errors.Is(err, os.ErrPermission), errors.Is(err, errInUse):
		return os.ErrPermission // Windows' sharing violations reach SFTP clients as permission denied
	}
	return sftp.ErrSSHFxFailure
}

type listerAt []os.FileInfo

func (l listerAt) ListAt(dst []os.FileInfo, off int64) (int, error) {
	if off >= int64(len(l)) {
		return 0, io.EOF
	}
	n := copy(dst, l[off:])
	if n+int(off) >= len(l) {
		return n, io.EOF
	}
	return n, nil
}

// fileInfo presents a node as os.FileInfo.
type fileInfo struct{ n fsNode }

func (f fileInfo) Name() string       { return baseOf(f.n.path) }
func (f fileInfo) Size() int64        { return int64(len(f.n.data)) }
func (f fileInfo) ModTime() time.Time { return f.n.modTime }
func (f fileInfo) IsDir() bool        { return f.n.dir }
func (f fileInfo) Sys() any           { return nil }
func (f fileInfo) Mode() os.FileMode {
	if f.n.dir {
		return os.ModeDir | 0o755
	}
	return 0o644
}
