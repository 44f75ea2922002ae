package windows

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
)

// HNSModule is where WMCO puts the Host Networking Service PowerShell module (hns.psm1) on a node: its
// Invoke-HNSRequest, New-HnsEndpoint and Attach-HNSHostEndpoint (and, in the simulator, Get-HnsNetwork and
// Remove-HnsNetwork, which a real host's HostNetworkingService module provides) exist in a session only after
// Import-Module of it.
const HNSModule = `C:\Temp\hns.psm1`

// The HNS networks hybrid-overlay-node creates when it runs: the base network it needs for the host's
// management vNIC, and the pod network whose subnet is the node's hybrid overlay subnet.
const (
	baseOverlayNetwork   = "BaseOVNKubernetesHybridOverlayNetwork"
	hybridOverlayNetwork = "OVNKubernetesHybridOverlayNetwork"
)

var hybridOverlayNetworks = []string{baseOverlayNetwork, hybridOverlayNetwork}

// hnsNetwork is an HNS network as Get-HnsNetwork emits it.
type hnsNetwork struct {
	name, kind, id string
	subnet         string // Subnets[0].AddressPrefix
	managementIP   string // the host's address on the network
}

func (n hnsNetwork) property(name string) (any, bool) {
	switch name {
	case "name":
		return n.name, true
	case "type":
		return n.kind, true
	case "id":
		return n.id, true
	case "managementip":
		return n.managementIP, true
	case "subnets":
		if n.subnet == "" {
			return psList{}, true
		}
		return psList{hnsSubnet{prefix: n.subnet, gateway: gatewayOf(n.subnet)}}, true
	}
	return nil, false
}

func (n hnsNetwork) String() string { return n.name }

// hnsSubnet is one entry of a network's Subnets.
type hnsSubnet struct{ prefix, gateway string }

func (s hnsSubnet) property(name string) (any, bool) {
	switch name {
	case "addressprefix":
		return s.prefix, true
	case "gatewayaddress":
		return s.gateway, true
	}
	return nil, false
}

// hnsEndpoint is an HNS endpoint as Invoke-HNSRequest and New-HnsEndpoint return it.
type hnsEndpoint struct {
	id, name, network string // network: the network's id
	mac, ip           string
	compartment       int // the host compartment it is attached to; 0 = not attached
}

func (e hnsEndpoint) property(name string) (any, bool) {
	switch name {
	case "id":
		return e.id, true
	case "name":
		return e.name, true
	case "virtualnetwork":
		return e.network, true
	case "macaddress":
		return e.mac, true
	case "ipaddress":
		return e.ip, true
	}
	return nil, false
}

// HNSNetworks lists the host's HNS networks by name, sorted.
func (h *Host) HNSNetworks() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.hns))
	for n := range h.hns {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// HNSNetwork is what the tests can inspect about one HNS network.
type HNSNetwork struct {
	Name, Type, ID, Subnet, ManagementIP string
}

// HNSNetworkInfo returns an HNS network by name.
func (h *Host) HNSNetworkInfo(name string) (HNSNetwork, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n, ok := h.hns[name]
	return HNSNetwork{Name: n.name, Type: n.kind, ID: n.id, Subnet: n.subnet, ManagementIP: n.managementIP}, ok
}

// HNSEndpoint is what the tests can inspect about one HNS endpoint.
type HNSEndpoint struct {
	ID, Name, NetworkID, MAC, IP string
	Compartment                  int // the host compartment it is attached to, 0 when not attached
}

// HNSEndpoints lists the host's HNS endpoints, by creation.
func (h *Host) HNSEndpoints() []HNSEndpoint {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]HNSEndpoint, 0, len(h.endpoints))
	for _, e := range h.endpoints {
		out = append(out, HNSEndpoint{ID: e.id, Name: e.name, NetworkID: e.network, MAC: e.mac, IP: e.ip, Compartment: e.compartment})
	}
	return out
}

// RemoveHNSEndpoint deletes the named HNS endpoints, as an administrator's Remove-HnsEndpoint (or a reboot
// of a host whose endpoints HNS does not keep) does; for tests of the network step.
func (h *Host) RemoveHNSEndpoint(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	kept := h.endpoints[:0]
	for _, e := range h.endpoints {
		if !strings.EqualFold(e.name, name) {
			kept = append(kept, e)
		}
	}
	h.endpoints = kept
}

// HybridOverlaySubnet is the subnet hybrid-overlay-node gives the pod network on this host (the node's
// k8s.ovn.org/hybrid-overlay-node-subnet annotation on a real cluster): Options.HybridOverlaySubnet.
func (h *Host) HybridOverlaySubnet() string { return h.opts.HybridOverlaySubnet }

// createHybridOverlayNetworksLocked is what a running hybrid-overlay-node leaves on the host: its networks,
// the pod network with the node's subnet and the host's address as management IP.
func (h *Host) createHybridOverlayNetworksLocked() {
	h.createHybridOverlayNetworksWithLocked(h.opts.HybridOverlaySubnet)
}

// CreateHybridOverlayNetworks is what hybrid-overlay-node does once its Node has its hybrid overlay subnet
// (a program behind hybrid-overlay-node.exe, sim/ovn): the host's HNS networks, the pod network with subnet.
func (p *Process) CreateHybridOverlayNetworks(subnet string) error {
	if _, n, err := net.ParseCIDR(subnet); err != nil || !n.IP.IsLoopback() {
		return fmt.Errorf("hybrid overlay subnet %q is not a CIDR in 127.0.0.0/8 (the simulator only hands out loopback addresses)", subnet)
	}
	p.host.mu.Lock()
	defer p.host.mu.Unlock()
	p.host.createHybridOverlayNetworksWithLocked(subnet)
	return nil
}

func (h *Host) createHybridOverlayNetworksWithLocked(subnet string) {
	if h.hns == nil {
		h.hns = map[string]hnsNetwork{}
	}
	for i, n := range hybridOverlayNetworks {
		if _, ok := h.hns[n]; ok {
			continue
		}
		nw := hnsNetwork{name: n, kind: "Overlay", id: fmt.Sprintf("%08X-0000-0000-0000-%012X", h.rng.Uint32(), i), managementIP: h.hostIP()}
		if n == hybridOverlayNetwork {
			nw.subnet = subnet
		}
		h.hns[n] = nw
	}
}

// hnsNetworkByIDLocked finds a network by its id (case-insensitive, as a GUID).
func (h *Host) hnsNetworkByIDLocked(id string) (hnsNetwork, bool) {
	for _, n := range h.hns {
		if strings.EqualFold(n.id, id) {
			return n, true
		}
	}
	return hnsNetwork{}, false
}

// newEndpointLocked creates an endpoint on a network with the next free address of its subnet (its
// gateway, the first address, is never handed out) and a Hyper-V MAC address.
func (h *Host) newEndpointLocked(n hnsNetwork, name string) (*hnsEndpoint, error) {
	ip, err := h.nextEndpointIPLocked(n)
	if err != nil {
		return nil, err
	}
	b := h.rng.Uint32()
	e := &hnsEndpoint{id: fmt.Sprintf("%08X-%04X-0000-0000-%012X", h.rng.Uint32(), len(h.endpoints), h.rng.Uint32()), name: name,
		network: n.id, ip: ip, mac: fmt.Sprintf("00-15-5D-%02X-%02X-%02X", byte(b>>16), byte(b>>8), byte(b))}
	h.endpoints = append(h.endpoints, e)
	return e, nil
}

func (h *Host) nextEndpointIPLocked(n hnsNetwork) (string, error) {
	_, cidr, err := net.ParseCIDR(n.subnet)
	if err != nil || cidr.IP.To4() == nil {
		return "", fmt.Errorf("network %s has no IPv4 subnet to give the endpoint an address from", n.name)
	}
	used := map[string]bool{}
	for _, e := range h.endpoints {
		used[e.ip] = true
	}
	base := cidr.IP.To4()
	for i := 2; i < 255; i++ {
		ip := net.IPv4(base[0], base[1], base[2], base[3]+byte(i)).To4()
		if !cidr.Contains(ip) {
			break
		}
		if !used[ip.String()] {
			return ip.String(), nil
		}
	}
	return "", fmt.Errorf("the subnet %s of network %s has no free address", n.subnet, n.name)
}

// gatewayOf is the first address of a subnet, HNS's gateway for it.
func gatewayOf(subnet string) string {
	_, cidr, err := net.ParseCIDR(subnet)
	if err != nil || cidr.IP.To4() == nil {
		return ""
	}
	ip := cidr.IP.To4()
	return net.IPv4(ip[0], ip[1], ip[2], ip[3]+1).String()
}

func runImportModule(p *pipeline, a *boundArgs, _ emitFn) error {
	v := a.named["name"]
	for _, name := range v.list {
		if !strings.HasSuffix(strings.ToLower(name), ".psm1") || !p.s.h.Exists(name) {
			p.cmdError("Import-Module", a, fmt.Sprintf("The specified module '%s' was not loaded because no valid module file was found in any module directory.", name),
				fmt.Sprintf("ResourceUnavailable: (%s:String) [Import-Module], FileNotFoundException", name), "Modules_ModuleNotFound,Microsoft.PowerShell.Commands.ImportModuleCommand")
			continue
		}
		if strings.EqualFold(baseOf(name), "hns.psm1") {
			p.s.hnsImported = true
		}
	}
	return nil
}

// hnsCommand is true when the session imported hns.psm1; otherwise the command is not recognized, as a
// function of a module that was never loaded.
func (p *pipeline) hnsCommand(name string) bool {
	if !p.s.hnsImported {
		p.notRecognized(name)
		return false
	}
	return true
}

func runGetHnsNetwork(p *pipeline, _ *boundArgs, emit emitFn) error {
	if !p.hnsCommand("Get-HnsNetwork") {
		return nil
	}
	h := p.s.h
	h.mu.Lock()
	var out []any
	names := make([]string, 0, len(h.hns))
	for n := range h.hns {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out = append(out, h.hns[n])
	}
	h.mu.Unlock()
	return emitAll(out, emit)
}

// runInvokeHNSRequest is hns.psm1's Invoke-HNSRequest for what WMCO asks of it: GET of the endpoints or the
// networks (the objects of HNS's answer). A POST is made by New-HnsEndpoint and Attach-HNSHostEndpoint.
func runInvokeHNSRequest(p *pipeline, a *boundArgs, emit emitFn) error {
	if !p.hnsCommand("Invoke-HNSRequest") {
		return nil
	}
	method, _ := a.str("method")
	kind, _ := a.str("type")
	if !strings.EqualFold(method, "GET") {
		p.cmdError("Invoke-HNSRequest", a, "winsim simulates Invoke-HNSRequest -Method GET only; New-HnsEndpoint and Attach-HNSHostEndpoint make the POSTs.",
			"NotImplemented: (:) [Invoke-HNSRequest], NotSupportedException", "SimulatorUnsupported")
		return nil
	}
	h := p.s.h
	h.mu.Lock()
	var out []any
	switch strings.ToLower(kind) {
	case "endpoints":
		for _, e := range h.endpoints {
			out = append(out, *e)
		}
	case "networks":
		for _, n := range h.hns {
			out = append(out, n)
		}
	default:
		h.mu.Unlock()
		p.cmdError("Invoke-HNSRequest", a, fmt.Sprintf("Cannot validate argument on parameter 'Type'. The argument %q does not belong to the set \"networks,endpoints,activities,policylists,endpointstats,plugins\" specified by the ValidateSet attribute.", kind),
			"InvalidData: (:) [Invoke-HNSRequest], ParameterBindingValidationException", "ParameterArgumentValidationError,Invoke-HNSRequest")
		return nil
	}
	h.mu.Unlock()
	return emitAll(out, emit)
}

// runNewHnsEndpoint is hns.psm1's New-HnsEndpoint -NetworkId ID -Name NAME: an endpoint on the network with
// an address of its subnet, not attached to anything yet.
func runNewHnsEndpoint(p *pipeline, a *boundArgs, emit emitFn) error {
	if !p.hnsCommand("New-HnsEndpoint") {
		return nil
	}
	id, _ := a.str("networkid")
	name, _ := a.str("name")
	h := p.s.h
	h.mu.Lock()
	n, ok := h.hnsNetworkByIDLocked(id)
	var e *hnsEndpoint
	var err error
	if ok {
		e, err = h.newEndpointLocked(n, name)
	}
	h.mu.Unlock()
	switch {
	case !ok:
		p.cmdError("Invoke-HNSRequest", a, "Element not found.", "NotSpecified: (:) [Write-Error], WriteErrorException", "Microsoft.PowerShell.Commands.WriteErrorException,Invoke-HNSRequest")
		return nil
	case err != nil:
		p.cmdError("Invoke-HNSRequest", a, err.Error(), "NotSpecified: (:) [Write-Error], WriteErrorException", "Microsoft.PowerShell.Commands.WriteErrorException,Invoke-HNSRequest")
		return nil
	}
	return emit(*e)
}

// runAttachHNSHostEndpoint is hns.psm1's Attach-HNSHostEndpoint -EndpointID ID -CompartmentID N: the endpoint
// gets a vNIC in the host's network compartment, where its address appears (Get-NetIPConfiguration).
func runAttachHNSHostEndpoint(p *pipeline, a *boundArgs, _ emitFn) error {
	if !p.hnsCommand("Attach-HNSHostEndpoint") {
		return nil
	}
	id, _ := a.str("endpointid")
	comp, _ := a.str("compartmentid")
	n, err := strconv.Atoi(comp)
	if err != nil || n < 1 {
		p.cmdError("Attach-HNSHostEndpoint", a, fmt.Sprintf("Cannot process argument transformation on parameter 'CompartmentID'. Cannot convert value %q to type \"System.Int32\".", comp),
			"InvalidData: (:) [Attach-HNSHostEndpoint], ParameterBindingArgumentTransformationException", "ParameterArgumentTransformationError,Attach-HNSHostEndpoint")
		return nil
	}
	h := p.s.h
	h.mu.Lock()
	var found *hnsEndpoint
	for _, e := range h.endpoints {
		if strings.EqualFold(e.id, id) {
			found = e
		}
	}
	already := found != nil && found.compartment != 0
	if found != nil && !already {
		found.compartment = n
	}
	h.mu.Unlock()
	switch {
	case found == nil:
		p.cmdError("Invoke-HNSRequest", a, "Element not found.", "NotSpecified: (:) [Write-Error], WriteErrorException", "Microsoft.PowerShell.Commands.WriteErrorException,Invoke-HNSRequest")
	case already:
		p.cmdError("Invoke-HNSRequest", a, "The endpoint is already attached.", "NotSpecified: (:) [Write-Error], WriteErrorException", "Microsoft.PowerShell.Commands.WriteErrorException,Invoke-HNSRequest")
	}
	return nil
}

// whereObject is Where-Object's simplified form: -Property NAME -EQ -Value VALUE (case-insensitive, as
// PowerShell compares strings).
func whereObject(spec *cmdletSpec, a *boundArgs, next emitFn) (emitFn, error) {
	prop, okP := a.str("property")
	value, okV := a.str("value")
	if !okP || !okV || !a.switches["eq"] {
		return nil, &bindError{spec.name, "winsim only simulates Where-Object -Property NAME -EQ -Value VALUE.", "SimulatorUnsupported"}
	}
	return func(in any) error {
		v, ok := propertyOf(in, strings.ToLower(prop))
		if ok && strings.EqualFold(toText(v), value) {
			return next(in)
		}
		return nil
	}, nil
}

// removeHnsNetwork deletes each network piped to it, with the endpoints on it.
func (p *pipeline) removeHnsNetwork(next emitFn) (emitFn, error) {
	if !p.s.hnsImported {
		return nil, &unknownCommand{"Remove-HnsNetwork"}
	}
	return func(in any) error {
		n, ok := in.(hnsNetwork)
		if !ok {
			p.cmdError("Remove-HnsNetwork", nil, "Cannot process the input object: it is not an HNS network.", "InvalidArgument: (:) [Remove-HnsNetwork], ParameterBindingException", "InputObjectNotBound")
			return nil
		}
		h := p.s.h
		h.mu.Lock()
		delete(h.hns, n.name)
		kept := h.endpoints[:0]
		for _, e := range h.endpoints {
			if e.network != n.id {
				kept = append(kept, e)
			}
		}
		h.endpoints = kept
		h.mu.Unlock()
		return nil
	}, nil
}
