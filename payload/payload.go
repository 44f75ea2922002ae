// Package payload reads what gets installed on a Windows node: a directory laid out like WMCO's /payload
// (binaries, each possibly as a one-file .tar.gz, and a sha256sum file), or the /payload of an OCI image.
// Every file is checked against sha256sum before anything is handed out, so a missing, corrupt or
// mismatched file is refused before a single byte goes to a host.
package payload

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/wmcon/wmcon/localfile"
	"github.com/wmcon/wmcon/nodeconfig"
)

// SumsFile is the checksum list at the payload's root: "<sha256>  <path>" per line, as sha256sum prints.
const SumsFile = "sha256sum"

// File is one verified payload file.
type File struct {
	Name   string // path inside the payload without .tar.gz, slash-separated (kube-node/kubelet.exe)
	Local  string // the verified, uncompressed file on this machine
	SHA256 string // lower-case hex
	Size   int64
}

// Payload is a verified set of files.
type Payload struct {
	Source string // the directory, or the image reference with its digest
	Files  []File // by Name
}

// NodeFiles is the payload as the configuration engine takes it.
func (p *Payload) NodeFiles() []nodeconfig.PayloadFile {
	out := make([]nodeconfig.PayloadFile, len(p.Files))
	for i, f := range p.Files {
		out[i] = nodeconfig.PayloadFile{Name: f.Name, Local: f.Local, SHA256: f.SHA256, Size: f.Size}
	}
	return out
}

// Bytes is the payload's total size.
func (p *Payload) Bytes() int64 {
	var n int64
	for _, f := range p.Files {
		n += f.Size
	}
	return n
}

// DefaultCacheDir is where pulled images and unpacked .tar.gz files go: the user cache directory.
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the payload (set XDG_CACHE_HOME): %w", err)
	}
	return filepath.Join(d, "wmcon", "payload"), nil
}

// LoadDir verifies a payload directory. Files stored as <name>.tar.gz (one file each, as WMCO ships them)
// are unpacked under cacheDir; sha256sum lists the uncompressed files, matched by base name as WMCO
// matches them. A file missing from disk, missing from sha256sum or whose hash differs is refused.
func LoadDir(dir, cacheDir string) (*Payload, error) {
	sums, err := readSums(filepath.Join(dir, SumsFile))
	if err != nil {
		return nil, err
	}
	var files []File
	var problems []string
	seen := map[string]bool{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || p == filepath.Join(dir, SumsFile) {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		f, problem, err := verify(p, filepath.ToSlash(rel), sums, cacheDir)
		if err != nil {
			return err
		}
		if problem != "" {
			problems = append(problems, problem)
			return nil
		}
		seen[path.Base(f.Name)] = true
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("payload %s: %w", dir, err)
	}
	for base := range sums {
		if !seen[base] {
			problems = append(problems, base+" is listed in sha256sum but missing")
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("payload %s refused: %s", dir, strings.Join(problems, "; "))
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return &Payload{Source: dir, Files: files}, nil
}

// readSums reads sha256sum into base name → lower-case hash.
func readSums(p string) (map[string]string, error) {
	data, err := localfile.Read(p, localfile.MaxSums)
	if localfile.IsRefused(err) {
		return nil, fmt.Errorf("payload %s: %w", SumsFile, err)
	}
	if err != nil {
		return nil, fmt.Errorf("payload has no readable %s (every WMCO payload lists its files' SHA-256 there): %w", SumsFile, err)
	}
	sums := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		hash, name, ok := strings.Cut(line, " ")
		name = strings.TrimLeft(name, " *")
		if _, err := hex.DecodeString(hash); !ok || err != nil || len(hash) != 64 || name == "" {
			return nil, fmt.Errorf("%s line %d is not \"<sha256>  <file>\": %q", SumsFile, n, line)
		}
		base := path.Base(strings.ReplaceAll(name, `\`, "/"))
		if old, dup := sums[base]; dup && old != strings.ToLower(hash) {
			return nil, fmt.Errorf("%s lists %s twice with different hashes", SumsFile, base)
		}
		sums[base] = strings.ToLower(hash)
	}
	return sums, nil
}

// verify hashes one file (unpacking a .tar.gz first) and compares it with sha256sum. A refusal is
// returned as a problem sentence; err is for I/O failures.
func verify(p, rel string, sums map[string]string, cacheDir string) (File, string, error) {
	name, local := rel, p
	if strings.HasSuffix(rel, ".tar.gz") {
		name = strings.TrimSuffix(rel, ".tar.gz")
		out, err := unpackOne(p, path.Base(name), cacheDir)
		if err != nil {
			return File{}, rel + ": " + err.Error(), nil
		}
		local = out
	}
	want, listed := sums[path.Base(name)]
	if !listed {
		return File{}, name + " is not listed in sha256sum", nil
	}
	got, size, err := hashFile(local)
	if err != nil {
		return File{}, "", err
	}
	if got != want {
		return File{}, fmt.Sprintf("%s has SHA-256 %s but sha256sum says %s (corrupt or tampered)", name, got, want), nil
	}
	return File{Name: name, Local: local, SHA256: got, Size: size}, "", nil
}

func hashFile(p string) (string, int64, error) {
	f, err := localfile.Open(p, localfile.MaxPayload)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return hex.EncodeToString(h.Sum(nil)), n, err
}

// unpackOne extracts the single file named base from a .tar.gz into cacheDir, keyed by the archive's
// hash so a changed archive never reuses a stale copy.
func unpackOne(archive, base, cacheDir string) (string, error) {
	sum, _, err := hashFile(archive)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(cacheDir, "unpacked", sum, base)
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	}
	f, err := localfile.Open(archive, localfile.MaxPayload)
	if err != nil {
		return "", err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return "", fmt.Errorf("not a gzip archive: %w", err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return "", fmt.Errorf("the archive does not hold %s", base)
		}
		if err != nil {
			return "", fmt.Errorf("corrupt archive: %w", err)
		}
		if h.Typeflag == tar.TypeReg && path.Base(h.Name) == base {
			if h.Size > localfile.MaxPayload { // a small archive can unpack to anything
				return "", fmt.Errorf("%s unpacks to %d bytes, more than the %d a payload file may have", base, h.Size, int64(localfile.MaxPayload))
			}
			return dst, writeAtomically(dst, tr)
		}
	}
}

// writeAtomically writes through a temporary file and renames it into place.
func writeAtomically(dst string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".unpack-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, r); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// Version identifies the payload by its content: the same files give the same version wherever they come
// from (a directory or an image), and any changed file gives another. A standalone node (no operator to
// name a version) carries it in its version annotation, so an upgrade knows which nodes have this payload.
func (p *Payload) Version() string {
	h := sha256.New()
	for _, f := range p.Files {
		fmt.Fprintf(h, "%s %s\n", f.Name, f.SHA256)
	}
	return "payload-" + hex.EncodeToString(h.Sum(nil))[:12]
}
