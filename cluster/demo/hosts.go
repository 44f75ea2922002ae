package demo

import (
	"fmt"
	"net"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/wmcon/wmcon/remote/winsim"
)

// startHosts starts one simulated Windows Server per Windows node on its own loopback address, each
// authorising the demo's key as WMCO's user-data would. The node that is still joining gets its host too,
// so it can be reached once it has registered.
func (c *Cluster) startHosts() error {
	c.Hosts = map[string]*winsim.Host{}
	for _, w := range c.Nodes {
		h, err := winsim.Start(winsim.Options{
			Addr:                      net.JoinHostPort(w.IP, "0"),
			AuthorizedKeys:            []ssh.PublicKey{c.PrivateKey.PublicKey()},
			Platform:                  "AWS",
			Configured:                true,
			RebootDowntime:            c.opts.RebootDowntime,
			LogInterval:               c.opts.LogInterval,
			LogHistory:                300,                 // a first `wmcon --demo logs NODE --tail N` shows N lines
			LoseMetadataRouteOnReboot: w.IP == "127.0.0.2", // one AWS host shows the EC2Launch route problem
		})
		if err != nil {
			c.Close()
			return fmt.Errorf("start simulated Windows host for %s: %w", NodeName(w.IP), err)
		}
		if w.KubeletOff {
			h.StopService("kubelet")
		}
		seedFleetConfig(h, w.IP, c.opts.Now())
		c.Hosts[NodeName(w.IP)] = h
	}
	return nil
}

// HostAddrs maps each Windows node to its simulated host's SSH address ("127.0.0.N:port").
func (c *Cluster) HostAddrs() map[string]string {
	out := make(map[string]string, len(c.Hosts))
	for node, h := range c.Hosts {
		out[node] = h.Addr()
	}
	return out
}

// Close stops the simulated hosts.
func (c *Cluster) Close() {
	for _, h := range c.Hosts {
		_ = h.Close()
	}
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
