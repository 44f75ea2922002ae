package registries

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func idms(name string, entries ...configv1.ImageDigestMirrors) configv1.ImageDigestMirrorSet {
	return configv1.ImageDigestMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: configv1.ImageDigestMirrorSetSpec{ImageDigestMirrors: entries}}
}

func itms(name string, entries ...configv1.ImageTagMirrors) configv1.ImageTagMirrorSet {
	return configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: configv1.ImageTagMirrorSetSpec{ImageTagMirrors: entries}}
}

func digest(src string, policy configv1.MirrorSourcePolicy, mirrors ...string) configv1.ImageDigestMirrors {
	e := configv1.ImageDigestMirrors{Source: src, MirrorSourcePolicy: policy}
	for _, m := range mirrors {
		e.Mirrors = append(e.Mirrors, configv1.ImageMirror(m))
	}
	return e
}

func tag(src string, policy configv1.MirrorSourcePolicy, mirrors ...string) configv1.ImageTagMirrors {
	e := configv1.ImageTagMirrors{Source: src, MirrorSourcePolicy: policy}
	for _, m := range mirrors {
		e.Mirrors = append(e.Mirrors, configv1.ImageMirror(m))
	}
	return e
}

func pullSecret(entries map[string]string) []byte {
	var parts []string
	for host, userpass := range entries {
		parts = append(parts, `"`+host+`":{"auth":"`+base64.StdEncoding.EncodeToString([]byte(userpass))+`"}`)
	}
	return []byte(`{"auths":{` + strings.Join(parts, ",") + `}}`)
}

func crlf(lines ...string) string { return strings.Join(lines, "\r\n") + "\r\n" }

func TestRenderFiles(t *testing.T) {
	never := configv1.NeverContactSource
	allow := configv1.AllowContactingSource
	cases := []struct {
		name  string
		in    Input
		files map[string]string // path → content
	}{
		{
			name: "suffix shared with the source is stripped",
			in: Input{DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("pause",
				digest("mcr.microsoft.com/oss/kubernetes/pause", "", "quay.io/me/oss/kubernetes/pause"))}},
			files: map[string]string{`mcr.microsoft.com\hosts.toml`: crlf(
				`server = "https://mcr.microsoft.com/v2"`, ``, `override_path = true`, ``,
				`[host."https://quay.io/v2/me"]`, `  capabilities = ["pull"]`, `  override_path = true`)},
		},
		{
			name: "ports: host_port_ directory, port kept in the URLs",
			in: Input{DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("a",
				digest("registry.local:5000/team/app", "", "mirror.local:8443/cache/team/app"))}},
			files: map[string]string{`registry.local_5000_\hosts.toml`: crlf(
				`server = "https://registry.local:5000/v2"`, ``, `override_path = true`, ``,
				`[host."https://mirror.local:8443/v2/cache"]`, `  capabilities = ["pull"]`, `  override_path = true`)},
		},
		{
			name: "same host merges across entries and objects, first place kept, resolve wins",
			in: Input{
				DigestMirrorSets: []configv1.ImageDigestMirrorSet{
					idms("b", digest("quay.io/x", "", "m1.example.com/x")),
					idms("a", digest("quay.io/y", "", "m2.example.com/y", "m1.example.com/y")),
				},
				TagMirrorSets: []configv1.ImageTagMirrorSet{itms("t", tag("quay.io/z", "", "m1.example.com/z"))},
			},
			files: map[string]string{`quay.io\hosts.toml`: crlf(
				`server = "https://quay.io/v2"`, ``, `override_path = true`, ``,
				`[host."https://m2.example.com/v2"]`, `  capabilities = ["pull"]`, `  override_path = true`, ``,
				`[host."https://m1.example.com/v2"]`, `  capabilities = ["pull", "resolve"]`, `  override_path = true`)},
		},
		{
			name: "NeverContactSource: server is the first mirror",
			in: Input{TagMirrorSets: []configv1.ImageTagMirrorSet{itms("t",
				tag("registry.redhat.io/ubi9", never, "mirror.corp/rh/ubi9", "backup.corp/ubi9"))}},
			files: map[string]string{`registry.redhat.io\hosts.toml`: crlf(
				`server = "https://mirror.corp/v2/rh"`, ``, `override_path = true`, ``,
				`[host."https://mirror.corp/v2/rh"]`, `  capabilities = ["pull", "resolve"]`, `  override_path = true`, ``,
				`[host."https://backup.corp/v2"]`, `  capabilities = ["pull", "resolve"]`, `  override_path = true`)},
		},
		{
			name: "auth header from the pull secret, most specific key",
			in: Input{
				DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("a",
					digest("docker.io/library", "", "mirror.corp/hub/library", "open.corp/library"))},
				PullSecret: pullSecret(map[string]string{"mirror.corp": "u:p", "https://mirror.corp/hub/": "hub:pw"}),
			},
			files: map[string]string{`docker.io\hosts.toml`: crlf(
				`server = "https://docker.io/v2"`, ``, `override_path = true`, ``,
				`[host."https://mirror.corp/v2/hub"]`, `  capabilities = ["pull"]`, `  override_path = true`,
				`  [host."https://mirror.corp/v2/hub".header]`,
				`    authorization = "Basic `+base64.StdEncoding.EncodeToString([]byte("hub:pw"))+`"`, ``,
				`[host."https://open.corp/v2"]`, `  capabilities = ["pull"]`, `  override_path = true`)},
		},
		{
			name: "a source without mirrors gets no file; an object without entries adds nothing",
			in: Input{
				DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("empty"), idms("a", digest("quay.io/a", never))},
				TagMirrorSets:    []configv1.ImageTagMirrorSet{itms("empty")},
			},
			files: map[string]string{},
		},
		{
			name: "whole-registry source keeps the mirror path",
			in: Input{DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("a",
				digest("quay.io", allow, "mirror.corp/quay"))}},
			files: map[string]string{`quay.io\hosts.toml`: crlf(
				`server = "https://quay.io/v2"`, ``, `override_path = true`, ``,
				`[host."https://mirror.corp/v2/quay"]`, `  capabilities = ["pull"]`, `  override_path = true`)},
		},
		{
			name: "the host is never stripped even when it equals a source path component",
			in: Input{DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("a",
				digest("quay.io/foo", "", "mirror.local/quay.io/foo"))}},
			files: map[string]string{`quay.io\hosts.toml`: crlf(
				`server = "https://quay.io/v2"`, ``, `override_path = true`, ``,
				`[host."https://mirror.local/v2/quay.io"]`, `  capabilities = ["pull"]`, `  override_path = true`)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tree, err := Render(tc.in)
			require.NoError(t, err)
			got := map[string]string{}
			for _, f := range tree.Files {
				got[f.Path()] = string(f.Content)
			}
			assert.Equal(t, tc.files, got)
		})
	}
}

// The policy merge must not depend on the order of entries or objects (WMCO's does).
func TestNeverContactSourceWinsInBothOrders(t *testing.T) {
	for _, names := range [][2]string{{"a", "b"}, {"b", "a"}} {
		for _, unset := range []configv1.MirrorSourcePolicy{"", configv1.AllowContactingSource} {
			in := Input{DigestMirrorSets: []configv1.ImageDigestMirrorSet{
				idms(names[0], digest("quay.io/x", configv1.NeverContactSource, "m1.corp/x")),
				idms(names[1], digest("quay.io/y", unset, "m2.corp/y")),
			}}
			tree, err := Render(in)
			require.NoError(t, err)
			require.Len(t, tree.Files, 1)
			assert.True(t, tree.Files[0].NeverContactSource, "order %v, other policy %q", names, unset)
			assert.NotContains(t, tree.Files[0].Server, "quay.io", "order %v, other policy %q", names, unset)
		}
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	in := Input{
		DigestMirrorSets: []configv1.ImageDigestMirrorSet{
			idms("z", digest("b.io/x", "", "m.corp/x")), idms("a", digest("a.io/x", "", "m.corp/x")),
		},
		TagMirrorSets: []configv1.ImageTagMirrorSet{itms("t", tag("c.io:5000/x", "", "m.corp/x"))},
	}
	first, err := Render(in)
	require.NoError(t, err)
	in.DigestMirrorSets[0], in.DigestMirrorSets[1] = in.DigestMirrorSets[1], in.DigestMirrorSets[0]
	second, err := Render(in)
	require.NoError(t, err)
	assert.Equal(t, first, second)
	var dirs []string
	for _, f := range first.Files {
		dirs = append(dirs, f.Dir)
	}
	assert.Equal(t, []string{"a.io", "b.io", "c.io_5000_"}, dirs)
}

func TestValidationNamesObjectAndEntry(t *testing.T) {
	cases := []struct {
		name  string
		in    Input
		wants []string
	}{
		{"mirror equal to its source",
			Input{DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("self", digest("quay.io/a", "", "quay.io/a"))}},
			[]string{`ImageDigestMirrorSet/self imageDigestMirrors[0].mirrors[0]`, "is its own source"}},
		{"tagged mirror",
			Input{TagMirrorSets: []configv1.ImageTagMirrorSet{itms("t", tag("quay.io/a", "", "ok.corp/a", "m.corp/a:v1"))}},
			[]string{`ImageTagMirrorSet/t imageTagMirrors[0].mirrors[1]`, "drop the :tag"}},
		{"digest source",
			Input{DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("d",
				digest("quay.io/a@sha256:"+strings.Repeat("a", 64), "", "m.corp/a"))}},
			[]string{`ImageDigestMirrorSet/d imageDigestMirrors[0].source`, "drop the @digest"}},
		{"uppercase path",
			Input{DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("u", digest("quay.io/a", "", "m.corp/Team/a"))}},
			[]string{`ImageDigestMirrorSet/u imageDigestMirrors[0].mirrors[0]`, "lowercase"}},
		{"scheme",
			Input{DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("s", digest("quay.io/a", "", "https://m.corp/a"))}},
			[]string{`imageDigestMirrors[0].mirrors[0]`, "without https://"}},
		{"bad host",
			Input{DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("h", digest("-bad-.io/a", "", "m.corp/a"))}},
			[]string{`imageDigestMirrors[0].source`, "not a valid registry host"}},
		{"bad policy",
			Input{DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("p", digest("quay.io/a", "Sometimes", "m.corp/a"))}},
			[]string{`imageDigestMirrors[0].mirrorSourcePolicy`, "NeverContactSource"}},
		{"empty mirror", Input{DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("e", digest("quay.io/a", "", ""))}},
			[]string{`imageDigestMirrors[0].mirrors[0]`, "empty"}},
		{"pull secret auth not base64",
			Input{PullSecret: []byte(`{"auths":{"m.corp":{"auth":"%%%"}}}`)},
			[]string{`auths["m.corp"]`, "not base64"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render(tc.in)
			require.Error(t, err)
			for _, w := range tc.wants {
				assert.Contains(t, err.Error(), w)
			}
			assert.NotContains(t, err.Error(), "%%%", "credentials never appear in errors")
		})
	}
}

func TestEveryProblemIsReported(t *testing.T) {
	_, err := Render(Input{DigestMirrorSets: []configv1.ImageDigestMirrorSet{
		idms("a", digest("quay.io/a", "", "quay.io/a", "m.corp/a:1")),
	}})
	var p *Problem
	require.ErrorAs(t, err, &p)
	assert.Equal(t, "ImageDigestMirrorSet/a", p.Object)
	assert.Equal(t, 2, strings.Count(err.Error(), "ImageDigestMirrorSet/a"))
	assert.False(t, errors.Is(err, errors.ErrUnsupported))
}

func TestPauseImageSuffixWarning(t *testing.T) {
	tree, err := Render(Input{DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("mcr",
		digest("mcr.microsoft.com/oss", "", "quay.io/me/mirrored"),
		digest("mcr.microsoft.com/oss/kubernetes/pause", "", "quay.io/me/oss/kubernetes/pause"))}})
	require.NoError(t, err)
	require.Len(t, tree.Warnings, 1)
	w := tree.Warnings[0]
	assert.Contains(t, w, "ImageDigestMirrorSet/mcr imageDigestMirrors[0].mirrors[0]")
	assert.Contains(t, w, PauseImage)
	assert.Contains(t, w, "from quay.io/me/mirrored/oss/kubernetes/pause, not from quay.io/me/mirrored/kubernetes/pause")
}

func TestSuffixWarningForOtherImages(t *testing.T) {
	tree, err := Render(Input{DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("a",
		digest("quay.io/team/app", "", "m.corp/app"), digest("quay.io/ok", "", "m.corp/ok"))}})
	require.NoError(t, err)
	require.Len(t, tree.Warnings, 1)
	assert.Contains(t, tree.Warnings[0], "imageDigestMirrors[0].mirrors[0]")
	assert.Contains(t, tree.Warnings[0], "under m.corp/team/app")
	assert.NotContains(t, tree.Warnings[0], PauseImage)
}

func TestWildcardSourceSkippedWithWarning(t *testing.T) {
	tree, err := Render(Input{DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("w",
		digest("*.redhat.io", "", "m.corp/rh"))}})
	require.NoError(t, err)
	assert.Empty(t, tree.Files)
	require.Len(t, tree.Warnings, 1)
	assert.Contains(t, tree.Warnings[0], "wildcard")
}

func TestDirName(t *testing.T) {
	for host, want := range map[string]string{
		"quay.io":             "quay.io",
		"registry.local:5000": "registry.local_5000_",
		"localhost:5000":      "localhost_5000_",
		"127.0.0.1:443":       "127.0.0.1_443_",
		"[::1]:5000":          "[1]_5000_",
	} {
		assert.Equal(t, want, DirName(host), host)
		assert.NotContains(t, DirName(host), ":", "':' is not valid in an NTFS name")
	}
}

func TestMaskedHidesCredentials(t *testing.T) {
	tree, err := Render(Input{
		DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("a", digest("quay.io/a", "", "m.corp/a"))},
		PullSecret:       pullSecret(map[string]string{"m.corp": "user:secret"}),
	})
	require.NoError(t, err)
	token := base64.StdEncoding.EncodeToString([]byte("user:secret"))
	require.Contains(t, string(tree.Files[0].Content), token)
	assert.NotContains(t, tree.Files[0].Masked(), token)
	assert.Contains(t, tree.Files[0].Masked(), `authorization = "Basic ••••••"`)
	assert.True(t, tree.Files[0].Mirrors[0].Auth)
}
