package remote

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	sshconfig "github.com/kevinburke/ssh_config"

	"github.com/wmcon/wmcon/localfile"
)

// Hop is one SSH server on the way to a node (a bastion), ProxyJump style.
type Hop struct {
	User          string
	Host          string
	Port          int
	IdentityFiles []string // extra keys for this hop (from ~/.ssh/config)
}

// Addr is "host:port".
func (h Hop) Addr() string { return net.JoinHostPort(h.Host, strconv.Itoa(h.portOr22())) }

func (h Hop) portOr22() int {
	if h.Port == 0 {
		return 22
	}
	return h.Port
}

// String is the jump spec form, "user@host:port".
func (h Hop) String() string {
	if h.User == "" {
		return h.Addr()
	}
	return h.User + "@" + h.Addr()
}

// ParseJumpSpec reads a ProxyJump value: "[user@]host[:port]" hops separated by commas, first hop first,
// such as the "core@host:port" the cluster derives from a run=ssh-bastion Service.
func ParseJumpSpec(spec string) ([]Hop, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "none" {
		return nil, nil
	}
	var hops []Hop
	for _, part := range strings.Split(spec, ",") {
		hop, err := parseHop(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("jump host %q: %w", part, err)
		}
		hops = append(hops, hop)
	}
	return hops, nil
}

func parseHop(s string) (Hop, error) {
	s = strings.TrimPrefix(s, "ssh://")
	var h Hop
	if at := strings.LastIndex(s, "@"); at >= 0 {
		h.User, s = s[:at], s[at+1:]
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		host, port = strings.Trim(s, "[]"), ""
	}
	if host == "" {
		return Hop{}, errors.New("no host name")
	}
	h.Host = host
	if port != "" {
		if h.Port, err = strconv.Atoi(port); err != nil || h.Port < 1 || h.Port > 65535 {
			return Hop{}, fmt.Errorf("bad port %q", port)
		}
	}
	return h, nil
}

// SSHConfig is what ~/.ssh/config says about one host.
type SSHConfig struct {
	HostName      string
	User          string
	Port          int
	IdentityFiles []string
	Jumps         []Hop // resolved recursively: a jump host's own ProxyJump comes first
}

// LoadSSHConfig reads an ssh_config file (the path is a parameter so tests use a temporary file;
// the console passes ~/.ssh/config). A missing file is an empty config.
func LoadSSHConfig(path string) (*sshconfig.Config, error) {
	data, err := localfile.Read(expandHome(path), localfile.MaxSSHConfig)
	if errors.Is(err, os.ErrNotExist) {
		return &sshconfig.Config{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read ssh config: %w", err)
	}
	cfg, err := sshconfig.DecodeBytes(data)
	if err != nil {
		return nil, fmt.Errorf("parse ssh config %s: %w", path, err)
	}
	return cfg, nil
}

// ResolveSSHConfig applies the config's Host blocks to alias (a node address or a Host alias) the way
// ssh does for HostName, User, Port, IdentityFile and ProxyJump.
func ResolveSSHConfig(cfg *sshconfig.Config, alias string) (SSHConfig, error) {
	return resolveSSHConfig(cfg, alias, 0)
}

const maxJumpDepth = 8

func resolveSSHConfig(cfg *sshconfig.Config, alias string, depth int) (SSHConfig, error) {
	if depth > maxJumpDepth {
		return SSHConfig{}, fmt.Errorf("ssh config: ProxyJump chain through %s is longer than %d hops (a loop?)", alias, maxJumpDepth)
	}
	get := func(key string) string { v, _ := cfg.Get(alias, key); return strings.TrimSpace(v) }
	out := SSHConfig{HostName: get("HostName"), User: get("User")}
	if out.HostName == "" {
		out.HostName = alias
	}
	if p := get("Port"); p != "" {
		port, err := strconv.Atoi(p)
		if err != nil {
			return SSHConfig{}, fmt.Errorf("ssh config for %s: bad Port %q", alias, p)
		}
		out.Port = port
	}
	files, _ := cfg.GetAll(alias, "IdentityFile")
	out.IdentityFiles = files
	jumps, err := ParseJumpSpec(get("ProxyJump"))
	if err != nil {
		return SSHConfig{}, fmt.Errorf("ssh config for %s: %w", alias, err)
	}
	for _, j := range jumps {
		resolved, err := resolveHop(cfg, j, depth+1)
		if err != nil {
			return SSHConfig{}, err
		}
		out.Jumps = append(out.Jumps, resolved...)
	}
	return out, nil
}

// resolveHop expands a jump host that is itself a config alias; values written in the spec win.
func resolveHop(cfg *sshconfig.Config, j Hop, depth int) ([]Hop, error) {
	sub, err := resolveSSHConfig(cfg, j.Host, depth)
	if err != nil {
		return nil, err
	}
	hop := Hop{User: j.User, Host: sub.HostName, Port: j.Port, IdentityFiles: sub.IdentityFiles}
	if hop.User == "" {
		hop.User = sub.User
	}
	if hop.Port == 0 {
		hop.Port = sub.Port
	}
	return append(sub.Jumps, hop), nil
}
