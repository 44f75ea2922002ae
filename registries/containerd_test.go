package registries

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/containerd/v2/core/remotes/docker"
	hostsconfig "github.com/containerd/containerd/v2/core/remotes/docker/config"
	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeTree lays the rendered tree out as it will be on the node, under a temporary registries directory.
func writeTree(t *testing.T, tree Tree) string {
	root := t.TempDir()
	for _, f := range tree.Files {
		require.NoError(t, os.MkdirAll(filepath.Join(root, f.Dir), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, f.Dir, "hosts.toml"), f.Content, 0o600))
	}
	return root
}

type loadedHost struct {
	URL    string
	Caps   docker.HostCapabilities
	Header string
}

// loadHosts asks containerd's own hosts configuration loader what it would try for a registry host. The
// directory lookup (host_port_ for a registry with a port) is containerd's hostDirectory, which its Linux and
// Windows builds share as their first choice, so finding the file here proves the name Windows looks up too.
func loadHosts(t *testing.T, root, host string) []loadedHost {
	hosts, err := hostsconfig.ConfigureHosts(context.Background(),
		hostsconfig.HostOptions{HostDir: hostsconfig.HostDirFromRoot(root)})(host)
	require.NoError(t, err, host)
	var out []loadedHost
	for _, h := range hosts {
		out = append(out, loadedHost{URL: h.Scheme + "://" + h.Host + h.Path, Caps: h.Capabilities,
			Header: strings.Join(h.Header["authorization"], ",")}) // containerd keeps the key as the file writes it
	}
	return out
}

const (
	pull    = docker.HostCapabilityPull
	resolve = docker.HostCapabilityResolve
	server  = docker.HostCapabilityPull | docker.HostCapabilityResolve | docker.HostCapabilityPush | docker.HostCapabilityReferrers
)

func TestContainerdLoadsRenderedFiles(t *testing.T) {
	token := base64.StdEncoding.EncodeToString([]byte("robot:s3cret"))
	tree, err := Render(Input{
		DigestMirrorSets: []configv1.ImageDigestMirrorSet{
			idms("pause", digest("mcr.microsoft.com/oss/kubernetes/pause", "", "quay.io/me/oss/kubernetes/pause")),
			idms("local", digest("registry.local:5000/team/app", configv1.NeverContactSource,
				"mirror.local:8443/cache/team/app", "backup.local/team/app")),
			idms("z-later", digest("registry.local:5000/other", "", "late.local/other")),
		},
		TagMirrorSets: []configv1.ImageTagMirrorSet{
			itms("tags", tag("mcr.microsoft.com/windows", "", "quay.io/me/windows", "mirror.corp/windows")),
		},
		PullSecret: pullSecret(map[string]string{"mirror.corp": "robot:s3cret"}),
	})
	require.NoError(t, err)
	root := writeTree(t, tree)

	assert.Equal(t, []loadedHost{
		{URL: "https://quay.io/v2/me", Caps: pull | resolve}, // resolve wins: the tag set names the same mirror
		{URL: "https://mirror.corp/v2", Caps: pull | resolve, Header: "Basic " + token},
		{URL: "https://mcr.microsoft.com/v2", Caps: server}, // the source is the fallback
	}, loadHosts(t, root, "mcr.microsoft.com"))

	assert.Equal(t, []loadedHost{
		{URL: "https://mirror.local:8443/v2/cache", Caps: pull},
		{URL: "https://backup.local/v2", Caps: pull},
		{URL: "https://late.local/v2", Caps: pull},                // merged from another object; policy still NeverContactSource
		{URL: "https://mirror.local:8443/v2/cache", Caps: server}, // never the source
	}, loadHosts(t, root, "registry.local:5000"))

	// A registry without mirrors has no file: containerd goes to the source as it always would.
	assert.Equal(t, []loadedHost{{URL: "https://quay.io/v2", Caps: server}}, loadHosts(t, root, "quay.io"))
}

// WMCO names a registry with a port "host:port"; containerd never finds that on Windows (its Windows lookup
// tries host_port_, then the name with ":" removed). This pins the name we write to containerd's first choice.
func TestPortDirectoryIsContainerdsFirstChoice(t *testing.T) {
	root := t.TempDir()
	for _, dir := range []string{"registry.local_5000_", "registry.local5000"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, dir), 0o755))
	}
	got, err := hostsconfig.HostDirFromRoot(root)("registry.local:5000")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, DirName("registry.local:5000")), got)
}
