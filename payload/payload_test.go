package payload

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/testsupport/ociregistry"
)

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func targz(t *testing.T, name string, data []byte) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}))
	_, err := tw.Write(data)
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

func TestLoadDirPlainAndCompressed(t *testing.T) {
	dir, cache := t.TempDir(), t.TempDir()
	kubelet := []byte("MZ kubelet")
	conf := []byte("version = 2\n")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "kube-node"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "generated"), 0o755)) // empty directories are ignored
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kube-node", "kubelet.exe.tar.gz"), targz(t, "kubelet.exe", kubelet), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "containerd_conf.toml"), conf, 0o644))
	sums := fmt.Sprintf("%s  /build/kubelet/_output/kubelet.exe\n%s  /build/pkg/internal/containerd_conf.toml\n", sha(kubelet), sha(conf))
	require.NoError(t, os.WriteFile(filepath.Join(dir, SumsFile), []byte(sums), 0o644))

	p, err := LoadDir(dir, cache)
	require.NoError(t, err)
	require.Len(t, p.Files, 2)
	assert.Equal(t, "containerd_conf.toml", p.Files[0].Name)
	assert.Equal(t, "kube-node/kubelet.exe", p.Files[1].Name)
	assert.Equal(t, sha(kubelet), p.Files[1].SHA256)
	assert.EqualValues(t, len(kubelet), p.Files[1].Size)
	got, err := os.ReadFile(p.Files[1].Local)
	require.NoError(t, err)
	assert.Equal(t, kubelet, got, "the .tar.gz is unpacked into the cache")
	assert.True(t, strings.HasPrefix(p.Files[1].Local, cache))
}

func TestLoadDirRefusals(t *testing.T) {
	write := func(t *testing.T, files map[string]string, sums string) string {
		dir := t.TempDir()
		for n, data := range files {
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, n)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(data), 0o644))
		}
		if sums != "" {
			require.NoError(t, os.WriteFile(filepath.Join(dir, SumsFile), []byte(sums), 0o644))
		}
		return dir
	}
	good := sha([]byte("a"))
	for _, tc := range []struct {
		name  string
		files map[string]string
		sums  string
		want  string
	}{
		{"no sha256sum", map[string]string{"a.exe": "a"}, "", "no readable sha256sum"},
		{"bad line", map[string]string{"a.exe": "a"}, "xyz a.exe\n", "line 1"},
		{"corrupt", map[string]string{"a.exe": "tampered"}, good + "  a.exe\n", "a.exe has SHA-256"},
		{"missing", map[string]string{"a.exe": "a"}, good + "  a.exe\n" + good + "  b.exe\n", "b.exe is listed in sha256sum but missing"},
		{"unlisted", map[string]string{"a.exe": "a", "extra.exe": "x"}, good + "  a.exe\n", "extra.exe is not listed"},
		{"broken archive", map[string]string{"a.exe.tar.gz": "not gzip"}, good + "  a.exe\n", "not a gzip archive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadDir(write(t, tc.files, tc.sums), t.TempDir())
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestSyntheticPayloadFeedsTheEngine(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, WriteSynthetic(dir, nodeconfig.RequiredPayload("AWS")))
	p, err := LoadDir(dir, t.TempDir())
	require.NoError(t, err)
	assert.Len(t, p.NodeFiles(), len(nodeconfig.RequiredPayload("AWS")))
}

func TestPullFromLoopbackRegistry(t *testing.T) {
	host := ociregistry.StartRegistry(t)
	dir := t.TempDir()
	require.NoError(t, WriteSynthetic(dir, nodeconfig.RequiredPayload("None")))
	ref := ociregistry.PushImage(t, host, dir)

	cache := t.TempDir()
	secret := []byte(`{"auths":{"` + host + `":{"auth":"dXNlcjpwYXNz"}}}`)
	p, err := Pull(context.Background(), ref, PullOptions{CacheDir: cache, PullSecret: secret})
	require.NoError(t, err)
	assert.Len(t, p.Files, len(nodeconfig.RequiredPayload("None")))
	assert.Contains(t, p.Source, "@sha256:")
	for _, f := range p.Files {
		assert.True(t, strings.HasPrefix(f.Local, filepath.Join(cache, "images")), f.Local)
	}

	again, err := Pull(context.Background(), ref, PullOptions{CacheDir: cache})
	require.NoError(t, err)
	assert.Equal(t, p.Files, again.Files, "the extracted digest is reused")
}

func TestPullRefusesTamperedImage(t *testing.T) {
	host := ociregistry.StartRegistry(t)
	dir := t.TempDir()
	require.NoError(t, WriteSynthetic(dir, nodeconfig.RequiredPayload("None")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kube-node", "kubelet.exe"), []byte("MZ evil"), 0o644))
	ref := ociregistry.PushImage(t, host, dir)
	_, err := Pull(context.Background(), ref, PullOptions{CacheDir: t.TempDir()})
	assert.ErrorContains(t, err, "kube-node/kubelet.exe has SHA-256")
}

func TestPullErrors(t *testing.T) {
	_, err := Pull(context.Background(), "Not A Ref", PullOptions{CacheDir: t.TempDir()})
	assert.ErrorContains(t, err, "not an image reference")
	host := ociregistry.StartRegistry(t)
	_, err = Pull(context.Background(), host+"/nothing:here", PullOptions{CacheDir: t.TempDir()})
	assert.ErrorContains(t, err, "pull payload image")
	_, err = Pull(context.Background(), host+"/x:y", PullOptions{CacheDir: t.TempDir(), PullSecret: []byte("{")})
	assert.ErrorContains(t, err, "not a .dockerconfigjson")
}

func TestVersionFollowsTheContent(t *testing.T) {
	names := []string{"kube-node/kubelet.exe", "containerd/containerd.exe"}
	load := func(build string) *Payload {
		dir := t.TempDir()
		require.NoError(t, WriteSyntheticBuild(dir, names, build))
		p, err := LoadDir(dir, t.TempDir())
		require.NoError(t, err)
		return p
	}
	a, again, b := load("1"), load("1"), load("2")
	assert.Regexp(t, `^payload-[0-9a-f]{12}$`, a.Version())
	assert.Equal(t, a.Version(), again.Version(), "the same files in another directory: the same version")
	assert.NotEqual(t, a.Version(), b.Version(), "another build: another version")
	assert.NotEqual(t, a.Version(), load("").Version())
}

// TestArchiveThatUnpacksTooLargeIsRefused: a .tar.gz of a few bytes can claim any size; one whose file is
// larger than a payload file may be is refused before anything is unpacked.
func TestArchiveThatUnpacksTooLargeIsRefused(t *testing.T) {
	var tarred bytes.Buffer
	tw := tar.NewWriter(&tarred)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "kubelet.exe", Mode: 0o644, Size: 3 << 30, Typeflag: tar.TypeReg}))
	var buf bytes.Buffer // the header alone: the claimed 3 GiB are never written
	gz := gzip.NewWriter(&buf)
	_, err := gz.Write(tarred.Bytes())
	require.NoError(t, err)
	require.NoError(t, gz.Close())

	dir, cache := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kubelet.exe.tar.gz"), buf.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, SumsFile), []byte(sha([]byte("x"))+"  kubelet.exe\n"), 0o644))
	_, err = LoadDir(dir, cache)
	assert.ErrorContains(t, err, "kubelet.exe unpacks to 3221225472 bytes, more than the 2147483648 a payload file may have")
	entries, _ := filepath.Glob(filepath.Join(cache, "unpacked", "*", "*"))
	assert.Empty(t, entries, "nothing unpacked")
}
