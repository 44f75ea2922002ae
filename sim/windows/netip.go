package windows

import (
	"fmt"
	"strconv"
	"strings"
)

// The host's IP interfaces as the NetTCPIP module shows them: the NIC, and a vNIC in the host compartment for
// each HNS endpoint attached to the host (the VIP endpoint's, whose address is kube-proxy's source VIP).

// ipInterface is one interface with its IPv4 address.
type ipInterface struct {
	index       int
	alias, mac  string
	ip          string
	compartment int
}

// ipInterfacesLocked lists the NIC, then the attached endpoints' vNICs.
func (h *Host) ipInterfacesLocked() []ipInterface {
	out := []ipInterface{{index: nicIndex, alias: nicAlias, mac: nicMAC, ip: h.hostIP(), compartment: 1}}
	for i, e := range h.endpoints {
		if e.compartment != 0 {
			out = append(out, ipInterface{index: 20 + i, alias: "vEthernet (" + e.name + ")", mac: e.mac, ip: e.ip, compartment: e.compartment})
		}
	}
	return out
}

// netIPConfiguration is an object of Get-NetIPConfiguration -Detailed.
type netIPConfiguration struct{ ipInterface }

func (c netIPConfiguration) property(name string) (any, bool) {
	switch name {
	case "interfacealias":
		return c.alias, true
	case "interfaceindex":
		return c.index, true
	case "compartmentid":
		return c.compartment, true
	case "netadapter":
		return netAdapter{alias: c.alias, mac: c.mac}, true
	case "ipv4address":
		return psList{netIPAddress{ipInterface: c.ipInterface}}, true
	}
	return nil, false
}

func (c netIPConfiguration) String() string { return c.alias }

// netAdapter is an MSFT_NetAdapter: its MAC address is LinkLayerAddress (and MacAddress), dash-separated.
type netAdapter struct{ alias, mac string }

func (a netAdapter) property(name string) (any, bool) {
	switch name {
	case "name", "interfacealias":
		return a.alias, true
	case "linklayeraddress", "macaddress":
		return a.mac, true
	}
	return nil, false
}

func (a netAdapter) String() string { return "MSFT_NetAdapter (Name = \"" + a.alias + "\")" }

// netIPAddress is an MSFT_NetIPAddress.
type netIPAddress struct{ ipInterface }

func (a netIPAddress) property(name string) (any, bool) {
	switch name {
	case "ipaddress":
		return a.ip, true
	case "interfaceindex", "ifindex":
		return a.index, true
	case "interfacealias":
		return a.alias, true
	case "addressfamily":
		return "IPv4", true
	case "prefixlength":
		return 24, true
	}
	return nil, false
}

func (a netIPAddress) String() string { return a.ip }

// runGetNetIPConfiguration is Get-NetIPConfiguration [-AllCompartments] [-All] [-Detailed]: without
// -AllCompartments only the default compartment's interfaces, which is where host endpoints are too.
func runGetNetIPConfiguration(p *pipeline, _ *boundArgs, emit emitFn) error {
	h := p.s.h
	h.mu.Lock()
	ifs := h.ipInterfacesLocked()
	h.mu.Unlock()
	for _, i := range ifs {
		if err := emit(netIPConfiguration{i}); err != nil {
			return err
		}
	}
	return nil
}

// runGetNetIPAddress is Get-NetIPAddress [-AddressFamily IPv4] [-InterfaceIndex N]: the addresses of the
// host's interfaces, of one interface when given.
func runGetNetIPAddress(p *pipeline, a *boundArgs, emit emitFn) error {
	idx, _ := a.str("interfaceindex")
	return p.s.h.emitIPAddresses(p, a, idx, emit)
}

func (h *Host) emitIPAddresses(p *pipeline, a *boundArgs, idx string, emit emitFn) error {
	if fam, ok := a.str("addressfamily"); ok && !strings.EqualFold(fam, "IPv4") && !strings.EqualFold(fam, "IPv6") {
		p.cmdError("Get-NetIPAddress", a, fmt.Sprintf("Cannot validate argument on parameter 'AddressFamily'. The argument %q does not belong to the set \"IPv4,IPv6\".", fam),
			"InvalidData: (:) [Get-NetIPAddress], ParameterBindingValidationException", "ParameterArgumentValidationError,Get-NetIPAddress")
		return nil
	}
	if fam, _ := a.str("addressfamily"); strings.EqualFold(fam, "IPv6") {
		return nil // the simulated interfaces have IPv4 addresses only
	}
	h.mu.Lock()
	ifs := h.ipInterfacesLocked()
	h.mu.Unlock()
	found := false
	for _, i := range ifs {
		if idx != "" && strconv.Itoa(i.index) != idx {
			continue
		}
		found = true
		if err := emit(netIPAddress{i}); err != nil {
			return err
		}
	}
	if !found {
		p.cmdError("Get-NetIPAddress", a, fmt.Sprintf("No matching MSFT_NetIPAddress objects found by CIM query for instances of the ROOT/StandardCimv2/MSFT_NetIPAddress class on the  CIM server: SELECT * FROM MSFT_NetIPAddress  WHERE ((InterfaceIndex = %s)). Verify query parameters and retry.", idx),
			"ObjectNotFound: (MSFT_NetIPAddress:String) [Get-NetIPAddress], CimJobException", "CmdletizationQuery_NotFound,Get-NetIPAddress")
	}
	return nil
}

// getNetIPAddressFilter is Get-NetIPAddress after a pipe: -InterfaceIndex (or its alias -ifIndex) is a
// script block evaluated for each piped object (delay-bind), such as {$_.ifIndex} for a route.
func (p *pipeline) getNetIPAddressFilter(spec *cmdletSpec, a *boundArgs, next emitFn) (emitFn, error) {
	v, ok := a.named["interfaceindex"]
	if !ok || (v.block == nil && len(v.list) == 0) {
		return nil, &bindError{spec.name, "winsim simulates Get-NetIPAddress after a pipe only with -InterfaceIndex {script block}.", "SimulatorUnsupported"}
	}
	return func(in any) error {
		idx := ""
		if len(v.list) > 0 {
			idx = v.list[0]
		} else {
			out, err := evalBlock(v.block, in)
			if err != nil {
				p.cmdError(spec.name, a, err.Error(), "InvalidOperation: (:) [], RuntimeException", "SimulatorUnsupported")
				return nil
			}
			idx = toText(out)
		}
		return p.s.h.emitIPAddresses(p, a, idx, next)
	}, nil
}
