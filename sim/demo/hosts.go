package demo

import (
	"context"
	"fmt"
	"math"
	"net"
	"sort"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/wmcon/wmcon/metrics"
	"github.com/wmcon/wmcon/sim/windows"
)

// startHosts starts one simulated Windows Server per Windows node on its own loopback address, each
// authorising the demo's key as WMCO's user-data would. The node that is still joining gets its host too,
// so it can be reached once it has registered.
func (c *Cluster) startHosts() error {
	c.Hosts = map[string]*windows.Host{}
	for _, w := range c.Nodes {
		h, err := c.startNodeHost(w)
		if err != nil {
			c.Close()
			return err
		}
		c.Hosts[NodeName(w.IP)] = h
	}
	return c.startBareHost()
}

// startNodeHost starts the simulated Windows Server of a node WMCO configured.
func (c *Cluster) startNodeHost(w WindowsNode) (*windows.Host, error) {
	var stopped map[string]time.Duration
	if w.KubeletOff {
		stopped = map[string]time.Duration{"kubelet": kubeletStoppedAgo}
	}
	h, err := windows.Start(windows.Options{
		StoppedAgo:                stopped,
		Addr:                      net.JoinHostPort(w.IP, "0"),
		AuthorizedKeys:            []ssh.PublicKey{c.PrivateKey.PublicKey()},
		Platform:                  "AWS",
		Configured:                true,
		APIServerURL:              infrastructure(c.opts.Now()).Status.APIServerInternalURL,
		RebootDowntime:            c.opts.RebootDowntime,
		LogInterval:               c.opts.LogInterval,
		LogHistory:                300,                                                // a first `wmcon --demo logs NODE --tail N` shows N lines
		LoseMetadataRouteOnReboot: w.IP == "127.0.0.2",                                // one AWS host shows the EC2Launch route problem
		ExporterCert:              c.exporterTLS.cert, ExporterKey: c.exporterTLS.key, // WMCO's, from its secret
	})
	if err != nil {
		return nil, fmt.Errorf("start simulated Windows host for %s: %w", NodeName(w.IP), err)
	}
	seedFleetConfig(h, w.IP, c.opts.Now())
	demoLoad(h, w.IP)
	return h, nil
}

// BareHostIP is the address of the demo's unconfigured Windows Server: OpenSSH and nothing else, not a
// node, in no Machine and not in windows-instances, so the operator does not own it and wmcon configures
// it (C in the console, or wmcon --demo configure --address 127.0.0.7).
const BareHostIP = "127.0.0.7"

// FreshBareHostIPs are the unconfigured Windows Servers of the fresh demo, for BYOH or standalone setup.
var FreshBareHostIPs = []string{BareHostIP, "127.0.0.8"}

// startBareHost starts the unconfigured hosts (BareHostIP; the fresh demo's FreshBareHostIPs). Their
// kubelet.exe is the honest kubelet: once wmcon has configured a host and approved its certificates it
// joins the demo through the demo's control plane.
func (c *Cluster) startBareHost() error {
	ips := []string{BareHostIP}
	if c.opts.Fresh {
		ips = FreshBareHostIPs
	}
	c.bare = map[string]*windows.Host{}
	for _, ip := range ips {
		o := windows.Options{
			Addr:           net.JoinHostPort(ip, "0"),
			AuthorizedKeys: []ssh.PublicKey{c.PrivateKey.PublicKey()},
			Platform:       "AWS",
			RebootDowntime: c.opts.RebootDowntime,
			LogInterval:    c.opts.LogInterval,
			Programs:       c.hostPrograms(),
		}
		h, err := windows.Start(o)
		if err != nil {
			c.Close()
			return fmt.Errorf("start the demo's unconfigured Windows host %s: %w", ip, err)
		}
		c.bare[ip] = h
	}
	c.Bare = c.bare[BareHostIP]
	return nil
}

// BareHosts are the addresses of the demo's unconfigured Windows hosts, for the console to offer.
func (c *Cluster) BareHosts() []string {
	out := make([]string, 0, len(c.bare))
	for ip := range c.bare {
		out = append(out, ip)
	}
	sort.Strings(out)
	return out
}

// BareHost is the unconfigured host at an address (nil when there is none).
func (c *Cluster) BareHost(ip string) *windows.Host { return c.bare[ip] }

// HostAddrs maps each Windows node to its simulated host's SSH address ("127.0.0.N:port"), and each
// unconfigured host's address and future node name to its own.
func (c *Cluster) HostAddrs() map[string]string {
	out := make(map[string]string, len(c.Hosts)+2*len(c.bare))
	for node, h := range c.Hosts {
		out[node] = h.Addr()
	}
	for ip, h := range c.bare { // by its address until it is configured, then by the node name its kubelet registers
		out[ip] = h.Addr()
		out[strings.ToLower(h.Hostname())] = h.Addr()
		out[h.NodeName()] = h.Addr() // the name its kubelet registers under (AWS: the metadata's)
	}
	if c.Machines != nil { // the fresh demo's Machine instances, as they come and go
		for k, a := range c.Machines.Addrs() {
			out[k] = a
		}
	}
	c.grownMu.Lock()
	defer c.grownMu.Unlock()
	for ip, h := range c.grown {
		out[NodeName(ip)] = h.Addr()
	}
	return out
}

// nodeHost is the simulated host of a node: one of the demo's own, or one a scaled MachineSet added.
func (c *Cluster) nodeHost(name string) *windows.Host {
	if h := c.Hosts[name]; h != nil {
		return h
	}
	c.grownMu.Lock()
	defer c.grownMu.Unlock()
	for ip, h := range c.grown {
		if NodeName(ip) == name {
			return h
		}
	}
	return nil
}

// ScrapeExporter reads the windows_exporter of a node's simulated host: one of the demo's own nodes, or a
// host that became a node since (a bare host configured, a Machine's instance), found by its address.
func (c *Cluster) ScrapeExporter(n metrics.Node) ([]byte, error) {
	h := c.nodeHost(n.Name)
	if h == nil && n.IP != "" {
		h = c.simHost(n.IP)
	}
	if h == nil {
		return nil, fmt.Errorf("%s has no simulated host", n.Name)
	}
	return h.ScrapeExporter()
}

// FreshMachineIPs are the loopback addresses the fresh demo's Machine instances get (127.0.0.20–39).
func FreshMachineIPs() []string {
	out := make([]string, 0, 20)
	for i := 20; i < 40; i++ {
		out = append(out, fmt.Sprintf("127.0.0.%d", i))
	}
	return out
}

// Close stops the simulated hosts.
func (c *Cluster) Close() {
	for _, h := range c.Hosts {
		_ = h.Close()
	}
	for _, h := range c.bare {
		_ = h.Close()
	}
	if c.Machines != nil {
		c.Machines.Close()
	}
	c.grownMu.Lock()
	for _, h := range c.grown {
		_ = h.Close()
	}
	c.grownMu.Unlock()
	c.payload.remove()
}

func (o *Options) applyDefaults() {
	if o.Step == 0 {
		o.Step = 4 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RebootDowntime == 0 {
		o.RebootDowntime = 6 * time.Second
	}
	if o.LogInterval == 0 {
		o.LogInterval = time.Second
	}
}

// demoLoad gives the demo's hosts different work, so `wmcon --demo top` shows a node pinned at full
// CPU and one running out of disk next to quiet ones.
func demoLoad(h *windows.Host, ip string) {
	switch ip {
	case "127.0.0.3":
		h.SetLoad(windows.Load{CPUBusy: 0.96, MemoryUsed: 0.81, RxBytesPS: 4.2e6, TxBytesPS: 1.1e6})
	case "127.0.0.4":
		for _, v := range h.Volumes() {
			if v.Name == "C:" {
				_ = h.SetVolumeFree("C:", v.SizeBytes*0.04)
			}
		}
		h.SetLoad(windows.Load{CPUBusy: 0.35, MemoryUsed: 0.62, RxBytesPS: 9e5, TxBytesPS: 3e5})
	case "127.0.0.5":
		h.SetLoad(windows.Load{CPUBusy: 0.22, MemoryUsed: 0.93, RxBytesPS: 2e5, TxBytesPS: 8e4})
	}
}

// varyLoad moves each host's CPU and network around the load demoLoad gave it, every second, so the
// console's sparklines move as a real fleet's do (memory stays: it moves slowly on a real node too). The
// CPU's swing is at most 8 points and shrinks near 0 and 100 %: the busy node stays above 90 %.
func (c *Cluster) varyLoad(ctx context.Context) {
	base := make(map[string]windows.Load, len(c.Hosts))
	for name, h := range c.Hosts {
		base[name] = totalLoad(h) // the node's figures, its containers' work included (podload.go)
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for name, h := range c.Hosts {
			phase := float64(i)/6 + float64(len(name)%7)
			h.SetLoad(ownShare(h, swing(base[name], phase), phase))
		}
	}
}

// swing is base moved by a smooth wave at phase: -1..1 of each figure's allowed swing.
func swing(base windows.Load, phase float64) windows.Load {
	w := 0.6*math.Sin(phase) + 0.4*math.Sin(2.7*phase)
	l := base
	l.CPUBusy = base.CPUBusy + w*min(0.08, 0.8*min(base.CPUBusy, 1-base.CPUBusy))
	l.RxBytesPS = base.RxBytesPS * (1 + 0.5*w)
	l.TxBytesPS = base.TxBytesPS * (1 + 0.5*w)
	return l
}
