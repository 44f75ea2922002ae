// Package registries turns the cluster's ImageDigestMirrorSets and ImageTagMirrorSets, and the pull secret,
// into the containerd host configuration a Windows node needs: one hosts.toml per source registry under
// C:\k\containerd\registries. It is pure: no cluster, no host, the same input always gives the same bytes.
//
// It follows WMCO's semantics (mirroring is per registry host on Windows; a mirror keeps its host and the
// leading path it does not share with the source; digest mirrors pull, tag mirrors also resolve) and fixes
// WMCO's defects: the directory is named the way containerd on Windows looks it up (host_port_ for a
// registry with a port), NeverContactSource wins whatever order the entries come in, a source without
// mirrors gets no file, and mirrors keep the priority order the mirror sets give them.
package registries

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
)

// Dir is where containerd on a Windows node reads its registry host configuration (config_path).
const Dir = `C:\k\containerd\registries`

// PauseImage is the sandbox image every Windows pod needs; a mirror that breaks the Windows suffix rule for it
// stops every pod on the node.
const PauseImage = "mcr.microsoft.com/oss/kubernetes/pause:3.9"

// Input is everything the rendering depends on.
type Input struct {
	DigestMirrorSets []configv1.ImageDigestMirrorSet
	TagMirrorSets    []configv1.ImageTagMirrorSet
	PullSecret       []byte // the .dockerconfigjson of openshift-config/pull-secret; may be empty
}

// Mirror is one mirror host of a source registry, in the order containerd tries them.
type Mirror struct {
	Repo    Repo   // mirror host and the leading path it keeps
	URL     string // https://host/v2[/path], the [host."…"] key
	Resolve bool   // may resolve tags to digests (an ImageTagMirrorSet mirrors it)
	Auth    bool   // the pull secret has credentials for it (an authorization header)
	auth    string // base64 user:password, never shown
}

// File is the hosts.toml of one source registry.
type File struct {
	Source             string // registry host[:port]
	Dir                string // directory name under Dir that containerd on Windows looks up
	Server             string // the fallback server URL
	NeverContactSource bool
	Mirrors            []Mirror
	Content            []byte // the file's bytes, CRLF line ends
}

// Path is the file's path relative to Dir, with Windows separators.
func (f File) Path() string { return f.Dir + `\hosts.toml` }

// Tree is the whole registries directory: one file per source registry, sorted by directory name.
type Tree struct {
	Files    []File
	Warnings []string
}

// Problem is one invalid entry of a mirror set, named so the user can find and fix it.
type Problem struct {
	Object string // e.g. "ImageDigestMirrorSet/mirrors"
	Entry  string // e.g. "imageDigestMirrors[1].mirrors[0]"
	Err    error
}

func (p *Problem) Error() string { return fmt.Sprintf("%s %s: %v", p.Object, p.Entry, p.Err) }
func (p *Problem) Unwrap() error { return p.Err }

// entry is one source with its mirrors, from either kind of mirror set.
type entry struct {
	object  string
	field   string
	index   int
	source  string
	mirrors []string
	policy  configv1.MirrorSourcePolicy
	resolve bool
}

// set is what accumulates per source registry host.
type set struct {
	source  string
	never   bool
	mirrors []Mirror
}

// Render validates the mirror sets and renders the registries tree. Any invalid entry fails the whole render
// (each problem named in the joined error), so a node never gets half the configuration.
func Render(in Input) (Tree, error) {
	auths, err := parseAuths(in.PullSecret)
	if err != nil {
		return Tree{}, err
	}
	sets := map[string]*set{}
	var problems []error
	var warnings []string
	for _, e := range entries(in) {
		p, w := addEntry(sets, e, auths)
		problems = append(problems, p...)
		warnings = append(warnings, w...)
	}
	if len(problems) > 0 {
		return Tree{}, errors.Join(problems...)
	}
	tree := Tree{Warnings: warnings}
	for _, s := range sets {
		if len(s.mirrors) == 0 {
			continue // no file: containerd then pulls from the source directly, which is what the user asked
		}
		tree.Files = append(tree.Files, s.file())
	}
	sort.Slice(tree.Files, func(i, j int) bool { return tree.Files[i].Dir < tree.Files[j].Dir })
	return tree, nil
}

// entries lists every entry, digest sets before tag sets, each kind by object name, so the result does not
// depend on the order the API server or the files gave the objects in.
func entries(in Input) []entry {
	idms := slices.Clone(in.DigestMirrorSets)
	sort.SliceStable(idms, func(i, j int) bool { return idms[i].Name < idms[j].Name })
	itms := slices.Clone(in.TagMirrorSets)
	sort.SliceStable(itms, func(i, j int) bool { return itms[i].Name < itms[j].Name })
	var out []entry
	for _, o := range idms {
		for i, m := range o.Spec.ImageDigestMirrors {
			out = append(out, entry{object: "ImageDigestMirrorSet/" + o.Name, field: "imageDigestMirrors", index: i,
				source: m.Source, mirrors: mirrorStrings(m.Mirrors), policy: m.MirrorSourcePolicy})
		}
	}
	for _, o := range itms {
		for i, m := range o.Spec.ImageTagMirrors {
			out = append(out, entry{object: "ImageTagMirrorSet/" + o.Name, field: "imageTagMirrors", index: i,
				source: m.Source, mirrors: mirrorStrings(m.Mirrors), policy: m.MirrorSourcePolicy, resolve: true})
		}
	}
	return out
}

func mirrorStrings[T ~string](ms []T) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m)
	}
	return out
}

// addEntry validates one entry and merges it into the set of its source registry host.
func addEntry(sets map[string]*set, e entry, auths authIndex) (problems []error, warnings []string) {
	name := fmt.Sprintf("%s[%d]", e.field, e.index)
	if strings.HasPrefix(e.source, "*.") {
		return nil, []string{fmt.Sprintf("%s %s: wildcard source %q skipped: containerd on Windows looks registries up "+
			"by exact host, so Windows nodes keep pulling those images from their source", e.object, name, e.source)}
	}
	src, err := ParseRepo(e.source)
	if err != nil {
		return []error{&Problem{e.object, name + ".source", err}}, nil
	}
	switch e.policy {
	case "", configv1.AllowContactingSource, configv1.NeverContactSource:
	default:
		problems = append(problems, &Problem{e.object, name + ".mirrorSourcePolicy",
			fmt.Errorf("%q is not a policy: use AllowContactingSource or NeverContactSource", e.policy)})
	}
	s := sets[src.Host]
	if s == nil {
		s = &set{source: src.Host}
		sets[src.Host] = s
	}
	if e.policy == configv1.NeverContactSource {
		s.never = true // whatever order the entries come in
	}
	for j, raw := range e.mirrors {
		field := fmt.Sprintf("%s.mirrors[%d]", name, j)
		m, err := ParseRepo(raw)
		if err == nil && m == src {
			err = fmt.Errorf("%q is its own source: a mirror must be another location", raw)
		}
		if err != nil {
			problems = append(problems, &Problem{e.object, field, err})
			continue
		}
		if w := suffixWarning(src, m); w != "" {
			warnings = append(warnings, fmt.Sprintf("%s %s: %s", e.object, field, w))
		}
		s.add(hostPrefix(src, m), e.resolve, auths)
	}
	return problems, warnings
}

// hostPrefix is the mirror minus the trailing path components it shares with the source: containerd appends
// the image's whole repository path to it. The registry host itself is never stripped.
func hostPrefix(src, mirror Repo) Repo {
	sp, mp := src.pathParts(), mirror.pathParts()
	n := 0
	for n < len(sp) && n < len(mp) && sp[len(sp)-1-n] == mp[len(mp)-1-n] {
		n++
	}
	return Repo{Host: mirror.Host, Path: strings.Join(mp[:len(mp)-n], "/")}
}

// suffixWarning explains when the mirror does not end with the source's path: Windows then looks for images
// somewhere other than where Linux nodes do. The pause image is named because every Windows pod needs it.
func suffixWarning(src, mirror Repo) string {
	if src.Path == "" || strings.HasSuffix("/"+mirror.Path, "/"+src.Path) {
		return ""
	}
	prefix := hostPrefix(src, mirror)
	windows := Repo{Host: prefix.Host, Path: strings.TrimPrefix(prefix.Path+"/"+src.Path, "/")}
	pause, _ := ParseImage(PauseImage)
	if pause.Host == src.Host && (pause.Path == src.Path || strings.HasPrefix(pause.Path, src.Path+"/")) {
		rest := strings.TrimPrefix(strings.TrimPrefix(pause.Path, src.Path), "/")
		return fmt.Sprintf("Windows nodes would pull the pause image %s from %s, not from %s as Linux nodes do, "+
			"and no Windows pod could start: a Windows mirror must end with the source's path "+
			"(<mirror>/<optional namespaces>/%s)", PauseImage, join(windows, pause.Path[len(src.Path):]),
			join(mirror, "/"+rest), src.Path)
	}
	return fmt.Sprintf("mirror %s does not end with the source's path %q: Windows nodes look for %s/… under %s/…, "+
		"not under %s/… as Linux nodes do", mirror, src.Path, src, windows, mirror)
}

func join(r Repo, rest string) string { return strings.TrimSuffix(r.String()+rest, "/") }

// add merges one mirror into the set: a mirror seen twice keeps its first place, and resolve wins.
func (s *set) add(prefix Repo, resolve bool, auths authIndex) {
	for i := range s.mirrors {
		if s.mirrors[i].Repo == prefix {
			s.mirrors[i].Resolve = s.mirrors[i].Resolve || resolve
			return
		}
	}
	auth := auths.lookup(prefix)
	s.mirrors = append(s.mirrors, Mirror{Repo: prefix, URL: mirrorURL(prefix), Resolve: resolve,
		Auth: auth != "", auth: auth})
}

// mirrorURL is the mirror's registry API base: containerd appends the image path to it (override_path).
func mirrorURL(r Repo) string {
	u := "https://" + r.Host + "/v2"
	if r.Path != "" {
		u += "/" + r.Path
	}
	return u
}

// DirName is the directory containerd on Windows looks up first for a registry host: from the last ":" a port
// becomes host_port_ (":" is not allowed in an NTFS name), as containerd's hostDirectory does, and any ":" left
// (an IPv6 literal) is dropped, as its Windows hostPaths does.
func DirName(host string) string {
	if i := strings.LastIndex(host, ":"); i > 0 {
		host = host[:i] + "_" + host[i+1:] + "_"
	}
	return strings.ReplaceAll(host, ":", "")
}

// Map is the tree as files relative to Dir (host_port_\hosts.toml → content), what goes on the node.
func (t Tree) Map() map[string][]byte {
	out := make(map[string][]byte, len(t.Files))
	for _, f := range t.Files {
		out[f.Path()] = f.Content
	}
	return out
}
