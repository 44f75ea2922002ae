package windows

import (
	"errors"
	"fmt"
	"net"
)

// Fleet is a set of hosts on consecutive loopback addresses (127.0.0.2, .3, ...), for the demo.
type Fleet struct {
	Hosts []*Host
}

// StartFleet starts n hosts from base: each gets its own address (base.Addr's port, 0 by default,
// on 127.0.0.2+i), host key and derived host name. On error the hosts already started are closed.
func StartFleet(n int, base Options) (*Fleet, error) {
	if n < 1 || n > 250 {
		return nil, fmt.Errorf("winsim: fleet of %d hosts: use 1 to 250", n)
	}
	port := "0"
	if base.Addr != "" {
		_, p, err := net.SplitHostPort(base.Addr)
		if err != nil {
			return nil, fmt.Errorf("winsim: fleet address %q: %w", base.Addr, err)
		}
		port = p
	}
	f := &Fleet{}
	for i := range n {
		o := base
		o.Addr = net.JoinHostPort(fmt.Sprintf("127.0.0.%d", i+2), port)
		o.HostKey, o.Hostname = nil, ""
		h, err := Start(o)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("winsim: fleet host %d: %w", i+1, err)
		}
		f.Hosts = append(f.Hosts, h)
	}
	return f, nil
}

// Close stops every host.
func (f *Fleet) Close() error {
	var errs []error
	for _, h := range f.Hosts {
		errs = append(errs, h.Close())
	}
	return errors.Join(errs...)
}
