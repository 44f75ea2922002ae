package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// The host's network as WMCO's kube-proxy pre-script (network-conf.ps1) reads and changes it: the hybrid
// overlay HNS network hybrid-overlay-node creates, the HNS endpoint whose address is kube-proxy's source VIP
// (made with WMCO's hns.psm1 at module), and the host's interfaces.

// HNSNetworkInfo is one HNS network.
type HNSNetworkInfo struct {
	ID, Name, Type string
	Subnet         string // Subnets.AddressPrefix (the node's pod subnet on the hybrid overlay network)
	ManagementIP   string // the host's address on the network
}

// HNSEndpointInfo is one HNS endpoint.
type HNSEndpointInfo struct {
	ID, MAC, IP string
}

// HostNetwork reads and changes what the network configuration needs.
type HostNetwork interface {
	HNSNetwork(ctx context.Context, module, name string) (HNSNetworkInfo, bool, error)
	HNSEndpoint(ctx context.Context, module, name string) (HNSEndpointInfo, bool, error)
	NewHostEndpoint(ctx context.Context, module, networkID, name string) (HNSEndpointInfo, error)
	AttachHostEndpoint(ctx context.Context, module, id string) error
	InterfaceAddress(ctx context.Context, mac string) (string, bool, error)
	ReadFile(ctx context.Context, path string, max int64) ([]byte, bool, error)
}

// HNSNetwork reads the named HNS network; ok is false when there is none (yet). One round trip.
func (c *Client) HNSNetwork(ctx context.Context, module, name string) (HNSNetworkInfo, bool, error) {
	out, err := c.RunOK(ctx, cmdHNSNetwork(module, name))
	if err != nil {
		return HNSNetworkInfo{}, false, err
	}
	for _, l := range lines(out) {
		f := strings.Split(strings.TrimSpace(l), "|")
		if len(f) == 4 && f[0] != "" {
			return HNSNetworkInfo{ID: f[0], Name: name, Type: f[1], Subnet: strings.TrimSpace(f[2]), ManagementIP: strings.TrimSpace(f[3])}, true, nil
		}
	}
	return HNSNetworkInfo{}, false, nil
}

// HNSEndpoint reads the named HNS endpoint; ok is false when there is none. One round trip.
func (c *Client) HNSEndpoint(ctx context.Context, module, name string) (HNSEndpointInfo, bool, error) {
	out, err := c.RunOK(ctx, cmdHNSEndpoint(module, name))
	if err != nil {
		return HNSEndpointInfo{}, false, err
	}
	return firstEndpoint(out)
}

// NewHostEndpoint creates an HNS endpoint on the network (not attached to anything yet). One round trip.
func (c *Client) NewHostEndpoint(ctx context.Context, module, networkID, name string) (HNSEndpointInfo, error) {
	if err := c.changing("create HNS endpoint " + name); err != nil {
		return HNSEndpointInfo{}, err
	}
	out, err := c.RunOK(ctx, cmdNewHNSEndpoint(module, networkID, name))
	if err != nil {
		return HNSEndpointInfo{}, err
	}
	ep, ok, err := firstEndpoint(out)
	if err == nil && !ok {
		err = fmt.Errorf("create HNS endpoint %s on %s: HNS answered no endpoint", name, c.Name())
	}
	return ep, err
}

func firstEndpoint(out string) (HNSEndpointInfo, bool, error) {
	for _, l := range lines(out) {
		f := strings.Split(strings.TrimSpace(l), "|")
		if len(f) == 3 && f[0] != "" {
			return HNSEndpointInfo{ID: f[0], MAC: strings.TrimSpace(f[1]), IP: strings.TrimSpace(f[2])}, true, nil
		}
	}
	return HNSEndpointInfo{}, false, nil
}

// AttachHostEndpoint attaches an HNS endpoint to the host's network compartment, where it gets a vNIC with
// its address. One round trip.
func (c *Client) AttachHostEndpoint(ctx context.Context, module, id string) error {
	if err := c.changing("attach HNS endpoint " + id + " to the host"); err != nil {
		return err
	}
	_, err := c.RunOK(ctx, cmdAttachHostEndpoint(module, id))
	return err
}

// InterfaceAddress is the IPv4 address of the host's interface with that MAC address, in any network
// compartment; ok is false when no interface has it. MAC addresses compare without case or separators.
func (c *Client) InterfaceAddress(ctx context.Context, mac string) (string, bool, error) {
	out, err := c.RunOK(ctx, cmdInterfaceAddresses())
	if err != nil {
		return "", false, err
	}
	want := normalMAC(mac)
	for _, l := range lines(out) {
		m, ip, ok := strings.Cut(strings.TrimSpace(l), "|")
		if ok && want != "" && normalMAC(m) == want {
			if fields := strings.Fields(ip); len(fields) > 0 {
				return fields[0], true, nil
			}
		}
	}
	return "", false, nil
}

func normalMAC(mac string) string {
	return strings.ToUpper(strings.NewReplacer("-", "", ":", "", " ", "").Replace(mac))
}

// ReadFile reads a file of at most max bytes over SFTP (no command); ok is false when it does not exist.
// For configuration files wmcon compares before rewriting, never for secrets.
func (c *Client) ReadFile(ctx context.Context, path string, max int64) ([]byte, bool, error) {
	conn, release, err := c.acquire(ctx)
	if err != nil {
		return nil, false, err
	}
	defer release()
	client, err := conn.sftpClient()
	if err != nil {
		return nil, false, &ConnectionLostError{Host: c.Name(), Err: fmt.Errorf("start SFTP: %w", err)}
	}
	f, err := client.Open(SFTPPath(path))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s on %s: %w", path, c.Name(), c.transferErr(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, false, fmt.Errorf("read %s on %s: %w", path, c.Name(), c.transferErr(err))
	}
	if int64(len(b)) > max {
		return nil, false, fmt.Errorf("read %s on %s: larger than %d bytes", path, c.Name(), max)
	}
	return b, true, nil
}
