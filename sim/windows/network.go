package windows

import (
	"fmt"
	"math/bits"
	"net"
	"strings"

	"github.com/wmcon/wmcon/config"
)

// route is one IPv4 route of the simulated host.
type route struct {
	dest, mask, gateway string // gateway "On-link" for local routes
	metric              int
}

func (r route) prefix() string {
	m := net.IPMask(net.ParseIP(r.mask).To4())
	ones, _ := m.Size()
	return fmt.Sprintf("%s/%d", r.dest, ones)
}

// hostIP is the simulated NIC's address: the loopback address the host listens on, as a real host's SSH
// server listens on its NIC's address (what WMCO's NODE_IP pre-script reports and the kubelet advertises).
func (h *Host) hostIP() string {
	if host, _, err := net.SplitHostPort(h.opts.Addr); err == nil {
		if ip := net.ParseIP(host).To4(); ip != nil {
			return ip.String()
		}
	}
	return "127.0.0.1"
}

// The host's NIC, as Windows names it.
const (
	nicIndex = 6
	nicAlias = "Ethernet"
	nicMAC   = "0A-5C-3E-91-7B-2D"
)

// bootRoutes is the routing table after a boot. On AWS, EC2Launch adds the metadata route, unless the
// host is set to lose it on reboots; routes added with `route add` (not -p) never survive.
func bootRoutes(o Options, rebooted bool) []route {
	rs := []route{
		{dest: "0.0.0.0", mask: "0.0.0.0", gateway: o.Gateway, metric: 15},
		{dest: "127.0.0.0", mask: "255.0.0.0", gateway: "On-link", metric: 331},
	}
	if strings.EqualFold(o.Platform, "AWS") && !(rebooted && o.LoseMetadataRouteOnReboot) {
		rs = append(rs, route{dest: config.EC2MetadataIP, mask: config.EC2MetadataMask, gateway: o.Gateway, metric: 15})
	}
	return rs
}

// HasMetadataRoute reports whether the EC2 metadata route is in the table.
func (h *Host) HasMetadataRoute() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.routes {
		if r.dest == config.EC2MetadataIP && r.mask == config.EC2MetadataMask {
			return true
		}
	}
	return false
}

// ipconfigText is ipconfig's output; with /all, the computer's names come first (the name Windows took at
// its last boot, not one Rename-Computer set since).
func (h *Host) ipconfigText(all bool) string {
	ip := h.hostIP()
	suffix := ""
	if strings.EqualFold(h.opts.Platform, "AWS") {
		suffix = "ec2.internal"
	}
	lines := []string{
		"",
		"Windows IP Configuration",
		"",
	}
	if all {
		lines = append(lines,
			"   Host Name . . . . . . . . . . . . : "+h.Hostname(),
			"   Primary Dns Suffix  . . . . . . . : "+h.opts.DNSSuffix,
			"   Node Type . . . . . . . . . . . . : Hybrid")
	}
	lines = append(lines,
		"",
		"Ethernet adapter Ethernet:",
		"",
		"   Connection-specific DNS Suffix  . : "+suffix,
		"   IPv4 Address. . . . . . . . . . . : "+ip,
		"   Subnet Mask . . . . . . . . . . . : 255.255.255.0",
		"   Default Gateway . . . . . . . . . : "+h.opts.Gateway,
	)
	return strings.Join(lines, "\r\n") + "\r\n"
}

func (h *Host) routePrintText() string {
	h.mu.Lock()
	routes := append([]route(nil), h.routes...)
	h.mu.Unlock()
	sep := strings.Repeat("=", 75)
	var b strings.Builder
	w := func(s string) { b.WriteString(s + "\r\n") }
	w(sep)
	w("Interface List")
	w("  6...0a 5c 3e 91 7b 2d ......Amazon Elastic Network Adapter")
	w("  1...........................Software Loopback Interface 1")
	w(sep)
	w("")
	w("IPv4 Route Table")
	w(sep)
	w("Active Routes:")
	w("Network Destination        Netmask          Gateway       Interface  Metric")
	for _, r := range routes {
		iface := h.hostIP()
		if r.gateway == "On-link" {
			iface = "127.0.0.1"
		}
		w(fmt.Sprintf("%17s  %15s  %15s  %15s  %5d", r.dest, r.mask, r.gateway, iface, r.metric))
	}
	w(sep)
	w("Persistent Routes:")
	w("  None")
	return b.String()
}

// routeAdd implements `route add DEST mask MASK GATEWAY [metric N]`.
func (h *Host) routeAdd(args []string) (string, int) {
	if len(args) < 4 || !strings.EqualFold(args[1], "mask") {
		return "Route: bad argument " + strings.Join(args, " ") + "\r\n", 1
	}
	dest, mask, gw := args[0], args[2], args[3]
	for _, a := range []string{dest, mask, gw} {
		if ip := net.ParseIP(a); ip == nil || ip.To4() == nil {
			return "Route: bad gateway address " + a + "\r\n", 1
		}
	}
	if m := net.ParseIP(mask).To4(); !contiguousMask(m) {
		return "The route addition failed: The parameter is incorrect.\r\n\r\n", 1
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.routes {
		if r.dest == dest && r.mask == mask {
			return "The route addition failed: The object already exists.\r\n\r\n", 1
		}
	}
	h.routes = append(h.routes, route{dest: dest, mask: mask, gateway: gw, metric: 15})
	return " OK!\r\n", 0
}

func contiguousMask(m net.IP) bool {
	v := uint32(m[0])<<24 | uint32(m[1])<<16 | uint32(m[2])<<8 | uint32(m[3])
	return bits.OnesCount32(v)+bits.TrailingZeros32(v) == 32 || v == 0
}

// routeObject is an MSFT_NetRoute as Get-NetRoute returns it.
type routeObject struct {
	ifIndex int
	prefix  string
	nextHop string
	metric  int
}

func (r routeObject) property(name string) (any, bool) {
	switch name {
	case "destinationprefix":
		return r.prefix, true
	case "nexthop":
		return r.nextHop, true
	case "ifindex", "interfaceindex":
		return r.ifIndex, true
	case "routemetric":
		return r.metric, true
	}
	return nil, false
}

func (r routeObject) tableHeader() []string {
	return []string{
		"ifIndex DestinationPrefix                              NextHop                                  RouteMetric ifMetric PolicyStore",
		"------- -----------------                              -------                                  ----------- -------- -----------",
	}
}

func (r routeObject) tableRow() string {
	return fmt.Sprintf("%-7d %-46s %-40s %-11d %-8d %s", r.ifIndex, r.prefix, r.nextHop, r.metric, 15, "ActiveStore")
}

func (h *Host) netRoutes(prefix string) []any {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []any
	for _, r := range h.routes {
		if prefix != "" && r.prefix() != prefix {
			continue
		}
		next, idx := r.gateway, 6
		if next == "On-link" {
			next, idx = "0.0.0.0", 1
		}
		out = append(out, routeObject{ifIndex: idx, prefix: r.prefix(), nextHop: next, metric: r.metric})
	}
	return out
}

// envVar keeps the name's spelling; lookups are case-insensitive as on Windows.
type envVar struct{ name, value string }

func defaultEnv(o Options) map[string]envVar {
	env := map[string]envVar{}
	for _, kv := range [][2]string{
		{"ComSpec", `C:\Windows\system32\cmd.exe`},
		{"OS", "Windows_NT"},
		{"Path", `C:\Windows\system32;C:\Windows;C:\Windows\System32\Wbem;C:\Windows\System32\WindowsPowerShell\v1.0\;C:\Windows\System32\OpenSSH\`},
		{"PATHEXT", ".COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC"},
		{"PROCESSOR_ARCHITECTURE", "AMD64"},
		{"NUMBER_OF_PROCESSORS", "2"},
		{"TEMP", `C:\Windows\TEMP`},
		{"TMP", `C:\Windows\TEMP`},
		{"windir", `C:\Windows`},
	} {
		env[strings.ToLower(kv[0])] = envVar{kv[0], kv[1]}
	}
	return env
}
