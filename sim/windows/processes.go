package windows

import (
	"fmt"
	"slices"
	"strings"
)

// Processes and Windows Defender: Get-Process finds the running services' programs and Defender's
// antimalware service (MsMpEng, running unless Options.NoDefender), and Add-MpPreference records process
// exclusions, as WMCO's Defender pre-script makes one for containerd.

// processObject is a System.Diagnostics.Process as Get-Process emits it.
type processObject struct {
	name string
	id   int
}

func (o processObject) property(name string) (any, bool) {
	switch name {
	case "name", "processname":
		return o.name, true
	case "id":
		return o.id, true
	}
	return nil, false
}

func (o processObject) String() string { return "System.Diagnostics.Process (" + o.name + ")" }

// processesLocked lists the running programs: Defender's, then each running service's executable.
func (h *Host) processesLocked() []processObject {
	var out []processObject
	if !h.opts.NoDefender {
		out = append(out, processObject{name: "MsMpEng", id: 3120})
	}
	for _, s := range h.sortedServicesLocked() {
		if s.state != StateRunning {
			continue
		}
		l := parseLaunch(s.BinaryPath)
		out = append(out, processObject{name: strings.TrimSuffix(exeName(l.exe), ".exe"), id: s.pid})
	}
	return out
}

// runGetProcess is Get-Process -Name NAME[,NAME]: each named process, or ProcessCommandException for a name
// that does not run.
func runGetProcess(p *pipeline, a *boundArgs, emit emitFn) error {
	h := p.s.h
	h.mu.Lock()
	procs := h.processesLocked()
	h.mu.Unlock()
	names := a.named["name"].list
	var out []any
	for _, n := range names {
		found := false
		for _, pr := range procs {
			if strings.EqualFold(pr.name, n) {
				out, found = append(out, pr), true
			}
		}
		if !found {
			p.cmdError("Get-Process", a, fmt.Sprintf("Cannot find a process with the name %q. Verify the process name and call the cmdlet again.", n),
				fmt.Sprintf("ObjectNotFound: (%s:String) [Get-Process], ProcessCommandException", n), "NoProcessFoundForGivenName,Microsoft.PowerShell.Commands.GetProcessCommand")
		}
	}
	return emitAll(out, emit)
}

// runAddMpPreference is Add-MpPreference -ExclusionProcess PATH: Defender stops scanning what the process
// opens. Defender must run to take it.
func runAddMpPreference(p *pipeline, a *boundArgs, _ emitFn) error {
	h := p.s.h
	if h.opts.NoDefender {
		p.cmdError("Add-MpPreference", a, "Operation failed with the following error: 0x800106ba. The antimalware service is not running.",
			"NotSpecified: (MSFT_MpPreference:root\\Microsoft\\...FT_MpPreference) [Add-MpPreference], CimException", "HRESULT 0x800106ba,Add-MpPreference")
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, x := range a.named["exclusionprocess"].list {
		if !slices.ContainsFunc(h.exclusions, func(e string) bool { return strings.EqualFold(e, x) }) {
			h.exclusions = append(h.exclusions, x)
		}
	}
	return nil
}

// DefenderExclusions lists the processes Windows Defender was told not to scan (Add-MpPreference).
func (h *Host) DefenderExclusions() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.exclusions)
}

// runRenameComputer is Rename-Computer -NewName NAME -Force: Windows records the new name and takes it at the
// next boot; until then hostname and ipconfig still give the old one, and PowerShell warns so.
func runRenameComputer(p *pipeline, a *boundArgs, _ emitFn) error {
	h := p.s.h
	name, _ := a.str("newname")
	old := h.Hostname()
	switch {
	case strings.EqualFold(name, old):
		p.cmdError("Rename-Computer", a, fmt.Sprintf("Skip computer '%s' with new name '%s' because the new name is the same as the current name.", old, name),
			"InvalidArgument: ("+old+":String) [Rename-Computer], InvalidOperationException", "NewNameIsOldName,Microsoft.PowerShell.Commands.RenameComputerCommand")
		return nil
	case validComputerName(name) != nil:
		p.cmdError("Rename-Computer", a, fmt.Sprintf("Skip computer '%s' with new name '%s' because the new name is not valid. The new computer name might contain not allowed characters.", old, name),
			"InvalidArgument: ("+old+":String) [Rename-Computer], InvalidOperationException", "InvalidNewName,Microsoft.PowerShell.Commands.RenameComputerCommand")
		return nil
	}
	h.renameAtBoot(name)
	fmt.Fprintf(p.s.stdout, "WARNING: The changes will take effect after you restart the computer %s.\r\n", old)
	return nil
}
