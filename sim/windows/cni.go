package windows

import (
	"encoding/json"
	"strings"
)

// cniConfigDir is where containerd's CNI plugin reads network configurations (containerd_conf.toml's
// conf_dir, as WMCO configures it).
const cniConfigDir = `C:\k\cni\config`

// CNINetworkReady reports whether containerd's CNI plugin finds a network configuration in C:\k\cni\config:
// a .conf or .json file holding one network (a name and a plugin type) or a .conflist holding a name and
// plugins. Anything else there (hybrid-overlay-node's certificates, a broken file) is skipped, as libcni
// skips it. Without one the runtime's network is not ready, and the kubelet reports the node NotReady.
func (h *Host) CNINetworkReady() bool {
	for _, name := range h.List(cniConfigDir) {
		lower := strings.ToLower(name)
		var want func(map[string]any) bool
		switch {
		case strings.HasSuffix(lower, ".conf"), strings.HasSuffix(lower, ".json"):
			want = func(m map[string]any) bool { return nonEmptyString(m["name"]) && nonEmptyString(m["type"]) }
		case strings.HasSuffix(lower, ".conflist"):
			want = func(m map[string]any) bool {
				plugins, _ := m["plugins"].([]any)
				return nonEmptyString(m["name"]) && len(plugins) > 0
			}
		default:
			continue
		}
		data, err := h.ReadFile(cniConfigDir + `\` + name)
		var m map[string]any
		if err == nil && json.Unmarshal(data, &m) == nil && want(m) {
			return true
		}
	}
	return false
}

func nonEmptyString(v any) bool {
	s, ok := v.(string)
	return ok && s != ""
}

// CNINetworkReady reports whether the host's runtime network is ready (Host.CNINetworkReady).
func (p *Process) CNINetworkReady() bool { return p.host.CNINetworkReady() }
