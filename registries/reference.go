package registries

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/distribution/reference"
)

// anchoredDomain is distribution/reference's own registry host grammar (host, IPv4, [IPv6], optional :port),
// anchored so a whole string must match it.
var anchoredDomain = regexp.MustCompile(`^(?:` + reference.DomainRegexp.String() + `)$`)

// Repo is a registry host and an optional repository path, the shape of an ImageDigestMirrorSet or
// ImageTagMirrorSet source or mirror (no tag, no digest).
type Repo struct {
	Host string // registry host[:port], as written
	Path string // repository path below the host, "" for a whole registry
}

// String gives the repository back as written.
func (r Repo) String() string {
	if r.Path == "" {
		return r.Host
	}
	return r.Host + "/" + r.Path
}

// pathParts splits the repository path into its components (none for a whole registry).
func (r Repo) pathParts() []string {
	if r.Path == "" {
		return nil
	}
	return strings.Split(r.Path, "/")
}

// ParseRepo parses a mirror-set source or mirror. The first component is always the registry host (as in
// OpenShift's API, even without a dot), the rest a repository path; distribution/reference checks both.
func ParseRepo(s string) (Repo, error) {
	if s == "" {
		return Repo{}, fmt.Errorf("empty: expected host[:port][/path]")
	}
	if strings.TrimSpace(s) != s {
		return Repo{}, fmt.Errorf("%q has leading or trailing spaces", s)
	}
	if strings.Contains(s, "://") {
		return Repo{}, fmt.Errorf("%q has a URL scheme: write host[:port][/path] without https://", s)
	}
	host, _, hasPath := strings.Cut(s, "/")
	if !anchoredDomain.MatchString(host) {
		return Repo{}, fmt.Errorf("%q: %q is not a valid registry host[:port]", s, host)
	}
	if !hasPath {
		return Repo{Host: host}, nil
	}
	ref, err := reference.Parse(s)
	if err != nil {
		return Repo{}, fmt.Errorf("%q: %w", s, err)
	}
	if _, ok := ref.(reference.Digested); ok {
		return Repo{}, fmt.Errorf("%q names an image by digest: mirror sets take a repository, drop the @digest", s)
	}
	if _, ok := ref.(reference.Tagged); ok {
		return Repo{}, fmt.Errorf("%q names an image by tag: mirror sets take a repository, drop the :tag", s)
	}
	named, ok := ref.(reference.Named)
	if !ok || reference.Domain(named) != host {
		return Repo{}, fmt.Errorf("%q: %q is not read as a registry host", s, host)
	}
	return Repo{Host: host, Path: reference.Path(named)}, nil
}

// ParseImage parses a full image reference (host/path[:tag][@digest]), as the pause image is written.
func ParseImage(s string) (Repo, error) {
	ref, err := reference.ParseNamed(s)
	if err != nil {
		return Repo{}, fmt.Errorf("image %q: %w", s, err)
	}
	return Repo{Host: reference.Domain(ref), Path: reference.Path(ref)}, nil
}
