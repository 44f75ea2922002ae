package model

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Proxy is the cluster-wide proxy as Windows nodes need it: the machine environment variables and the
// trusted CA bundle that goes to C:\k\ca-bundle.crt.
type Proxy struct {
	HTTP, HTTPS, NoProxy string
	TrustedCA            []byte // PEM bundle; empty when the cluster trusts no extra CA
	TrustedCAName        string // the ConfigMap it came from (openshift-config), for messages
}

// Env is the proxy as machine environment variables; an empty value means the variable must not exist.
func (p Proxy) Env() map[string]string {
	return map[string]string{"HTTP_PROXY": p.HTTP, "HTTPS_PROXY": p.HTTPS, "NO_PROXY": p.NoProxy}
}

// ProxyValueError is a cluster proxy setting wmcon refuses to write to a node: it holds a control
// character (a CR or LF would go into the node's machine environment as it is, splitting or corrupting
// what every service reads). The value itself is not shown: it may hold a password.
type ProxyValueError struct {
	Field string // httpProxy, httpsProxy, noProxy
	Char  rune
	At    int // byte offset
}

func (e *ProxyValueError) Error() string {
	return fmt.Sprintf("the cluster's proxy (proxy/cluster) %s has the control character %q at byte %d: wmcon does not write it into "+
		"the Windows nodes' machine environment; remove it from the Proxy (oc edit proxy/cluster)", e.Field, e.Char, e.At)
}

// Check refuses a proxy with a control character in any of its values (ProxyValueError).
func (p Proxy) Check() error {
	for _, f := range [][2]string{{"httpProxy", p.HTTP}, {"httpsProxy", p.HTTPS}, {"noProxy", p.NoProxy}} {
		if i := strings.IndexFunc(f[1], unicode.IsControl); i >= 0 {
			r, _ := utf8.DecodeRuneInString(f[1][i:])
			return &ProxyValueError{Field: f[0], Char: r, At: i}
		}
	}
	return nil
}

// ProxyVariables are the variables wmcon manages, in display order.
var ProxyVariables = []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"}

// MirrorsReport is what the console's Mirrors pane shows: the registries tree rendered from the cluster's
// mirror sets and how each Windows node's directory compares with it.
type MirrorsReport struct {
	Files    []MirrorFile
	Warnings []string
	Nodes    []MirrorNodeState
}

// MirrorFile is the hosts.toml of one source registry.
type MirrorFile struct {
	Source             string   // registry host[:port]
	Path               string   // relative to the registries directory, e.g. registry.local_5000_\hosts.toml
	Server             string   // where containerd falls back to
	NeverContactSource bool     // no fallback to the source
	Mirrors            []string // in the order containerd tries them
	Content            string   // the file with credentials masked, for showing
}

// Mirror states of a node (as actions.MirrorState).
const (
	MirrorsInStep    = "in-step"
	MirrorsOutOfStep = "out-of-step"
	MirrorsUnknown   = "unknown" // the host could not be read
)

// MirrorNodeState is one node's registries directory against the rendered files.
type MirrorNodeState struct {
	Node    string
	State   string   // MirrorsInStep, MirrorsOutOfStep or MirrorsUnknown
	Summary string   // in a few words, with the reason when unknown
	Missing []string // paths of files the node lacks
	Differs []string // paths of files whose content differs
	Extra   []string // paths of files the node has and the tree does not
}

// FileState says how a node stands for one file of the tree: in-step, missing, differs or unknown.
func (s MirrorNodeState) FileState(path string) string {
	switch {
	case s.State == MirrorsUnknown:
		return MirrorsUnknown
	case slices.Contains(s.Missing, path):
		return "missing"
	case slices.Contains(s.Differs, path):
		return "differs"
	}
	return MirrorsInStep
}

// ProxyVar is one proxy variable on one node.
type ProxyVar struct {
	Name  string `json:"name"`
	Want  string `json:"want"` // "" = must not exist
	Have  string `json:"have"`
	Drift bool   `json:"drift"`
}

// ProxyNodeStatus is one node's proxy configuration against the cluster's.
type ProxyNodeStatus struct {
	Node     string     `json:"node"`
	Vars     []ProxyVar `json:"vars,omitempty"`
	CABundle string     `json:"caBundle,omitempty"` // in-step, differs, missing, unexpected (present, none wanted)
	Drift    bool       `json:"drift"`
	Error    string     `json:"error,omitempty"` // the host could not be read
}

// CA bundle states.
const (
	CAInStep     = "in-step"
	CADiffers    = "differs"
	CAMissing    = "missing"
	CAUnexpected = "unexpected"
	CANone       = "none" // none wanted, none there
)

// ProxyReport is the cluster-wide proxy next to what each Windows node has (the console's Proxy view).
type ProxyReport struct {
	Cluster Proxy
	Nodes   []ProxyNodeStatus
}

// NodesByName indexes nodes by name and lists the names once each, in order: a fleet operation's targets.
func NodesByName(nodes []NodeInfo) (map[string]NodeInfo, []string) {
	byName := make(map[string]NodeInfo, len(nodes))
	var names []string
	for _, n := range nodes {
		if _, dup := byName[n.Name]; !dup {
			names = append(names, n.Name)
		}
		byName[n.Name] = n
	}
	return byName, names
}
