package windows

import (
	"fmt"
	"sort"
	"strings"
)

// HNSModule is where WMCO puts the Host Networking Service PowerShell module (hns.psm1) on a node; its
// Get-HnsNetwork and Remove-HnsNetwork exist in a session only after Import-Module of it.
const HNSModule = `C:\Temp\hns.psm1`

// hybridOverlayNetworks are the HNS networks hybrid-overlay-node creates when it runs.
var hybridOverlayNetworks = []string{"BaseOVNKubernetesHybridOverlayNetwork", "OVNKubernetesHybridOverlayNetwork"}

// hnsNetwork is an object Get-HnsNetwork emits.
type hnsNetwork struct{ name, kind, id string }

func (n hnsNetwork) property(name string) (any, bool) {
	switch name {
	case "name":
		return n.name, true
	case "type":
		return n.kind, true
	case "id":
		return n.id, true
	}
	return nil, false
}

func (n hnsNetwork) String() string { return n.name }

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

// createHybridOverlayNetworksLocked is what a running hybrid-overlay-node leaves on the host.
func (h *Host) createHybridOverlayNetworksLocked() {
	if h.hns == nil {
		h.hns = map[string]hnsNetwork{}
	}
	for i, n := range hybridOverlayNetworks {
		if _, ok := h.hns[n]; !ok {
			h.hns[n] = hnsNetwork{name: n, kind: "Overlay", id: fmt.Sprintf("%08X-0000-0000-0000-%012X", h.rng.Uint32(), i)}
		}
	}
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

func runGetHnsNetwork(p *pipeline, _ *boundArgs, emit emitFn) error {
	if !p.s.hnsImported {
		p.notRecognized("Get-HnsNetwork")
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

// removeHnsNetwork deletes each network piped to it.
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
		h.mu.Unlock()
		return nil
	}, nil
}
