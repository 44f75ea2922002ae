package registries

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRepo(t *testing.T) {
	for in, want := range map[string]Repo{
		"quay.io":                          {Host: "quay.io"},
		"quay.io/a/b":                      {Host: "quay.io", Path: "a/b"},
		"registry.local:5000/team/app":     {Host: "registry.local:5000", Path: "team/app"},
		"localhost/x":                      {Host: "localhost", Path: "x"},
		"mirror/x":                         {Host: "mirror", Path: "x"}, // OpenShift reads the first part as the host
		"127.0.0.1:443/a":                  {Host: "127.0.0.1:443", Path: "a"},
		"registry.local:5000":              {Host: "registry.local:5000"},
		"mcr.microsoft.com/oss/kubernetes": {Host: "mcr.microsoft.com", Path: "oss/kubernetes"},
	} {
		got, err := ParseRepo(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
		assert.Equal(t, in, got.String())
	}
}

// FuzzParseRepo checks the parser never panics, and that whatever it accepts is a registry host the
// directory name is built from without ":" and that prints back as it was written. `make test` runs the seeds.
func FuzzParseRepo(f *testing.F) {
	for _, seed := range []string{
		"quay.io", "quay.io/a/b", "registry.local:5000/team/app", "registry.local:5000", "[::1]:5000/x",
		"mcr.microsoft.com/oss/kubernetes/pause", "quay.io/a:tag", "quay.io/a@sha256:" + strings.Repeat("0", 64),
		"https://quay.io/a", "*.redhat.io", "", " quay.io", "Quay.IO/a", "quay.io//a", "quay.io/A", "a:b:c/d",
		"quay.io/a/", "-x.io/a", "x.io:99999999999999999999/a", "\x00", "quay.io/a__b/c--d/e.f",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRepo(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("ParseRepo(%q): empty error", s)
			}
			return
		}
		if r.String() != s {
			t.Fatalf("ParseRepo(%q) prints back as %q", s, r.String())
		}
		if !anchoredDomain.MatchString(r.Host) || strings.Contains(r.Path, "//") || strings.HasSuffix(r.Path, "/") {
			t.Fatalf("ParseRepo(%q) accepted host %q path %q", s, r.Host, r.Path)
		}
		if strings.Contains(DirName(r.Host), ":") {
			t.Fatalf("DirName(%q) = %q keeps a ':'", r.Host, DirName(r.Host))
		}
		again, err := ParseRepo(r.String())
		if err != nil || again != r {
			t.Fatalf("ParseRepo(%q) is not stable: %v, %v", s, again, err)
		}
		if p := hostPrefix(r, r); p.Host != r.Host || p.Path != "" {
			t.Fatalf("hostPrefix(%v, itself) = %v", r, p)
		}
	})
}
