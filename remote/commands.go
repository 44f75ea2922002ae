package remote

import (
	"strconv"
	"strings"
)

// The command shapes of COMMANDS.md, one builder each. Nothing else in the package writes a command line.

func cmdTestPath(p string) string { return "Test-Path -LiteralPath " + Quote(p) }

func cmdFileHash(p string) string {
	return "(Get-FileHash -LiteralPath " + Quote(p) + " -Algorithm SHA256).Hash"
}

func cmdMakeDir(p string) string {
	return "New-Item -ItemType Directory -Force -Path " + Quote(p) + " | Out-Null"
}

func cmdMoveItem(from, to string) string {
	return "Move-Item -LiteralPath " + Quote(from) + " -Destination " + Quote(to) + " -Force"
}

func cmdRemoveItem(p string, recurse bool) string {
	cmd := "Remove-Item -LiteralPath " + Quote(p) + " -Force"
	if recurse {
		cmd += " -Recurse"
	}
	return cmd
}

// cmdSwapDir puts a fully written directory in place of another with renames only: -ErrorAction Stop makes a
// failed rename end the line, so the second never runs after the first failed.
func cmdSwapDir(dir, stage, old string, exists bool) string {
	swap := "Move-Item -LiteralPath " + Quote(stage) + " -Destination " + Quote(dir) + " -ErrorAction Stop"
	if !exists {
		return swap
	}
	return "Move-Item -LiteralPath " + Quote(dir) + " -Destination " + Quote(old) + " -ErrorAction Stop; " + swap
}

func cmdLineCount(p string) string { return "@(Get-Content -LiteralPath " + Quote(p) + ").Count" }

func cmdTailOnce(p string, n int) string {
	return "Get-Content -LiteralPath " + Quote(p) + " -Tail " + strconv.Itoa(n)
}

func cmdFollow(p string, skip int) string {
	return "Get-Content -LiteralPath " + Quote(p) + " -Wait | Select-Object -Skip " + strconv.Itoa(skip)
}

func cmdListDir(p string) string { return "Get-ChildItem -LiteralPath " + Quote(p) + " -Name" }

// sc.exe commands; callers validate the service name first.
func cmdSCQueryConfig(name string) string { return "sc.exe qc " + Quote(name) }
func cmdSCQuery(name string) string       { return "sc.exe query " + Quote(name) }
func cmdSCStart(name string) string       { return "sc.exe start " + Quote(name) }
func cmdSCStop(name string) string        { return "sc.exe stop " + Quote(name) }
func cmdSCDelete(name string) string      { return "sc.exe delete " + Quote(name) }

func cmdSCCreate(name, binPath string, deps []string) string {
	cmd := "sc.exe create " + Quote(name) + " binPath=" + Quote(binPath) + " start=auto"
	if len(deps) > 0 {
		cmd += " depend=" + Quote(strings.Join(deps, "/"))
	}
	return cmd
}

func cmdSCDescription(name, text string) string {
	return "sc.exe description " + Quote(name) + " " + Quote(text)
}

func cmdSCFailure(name string) string {
	return "sc.exe failure " + Quote(name) + " reset= 600 actions= restart/10/restart/30/restart/60/restart/120"
}

func cmdServiceStates(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = Quote(n)
	}
	return "Get-Service -Name " + strings.Join(quoted, ",") +
		" -ErrorAction SilentlyContinue | ForEach-Object { $_.Name + '=' + $_.Status }"
}

func cmdRestart() string     { return "Restart-Computer -Force" }
func cmdHostname() string    { return "hostname" }
func cmdIPConfig() string    { return "ipconfig" }
func cmdIPConfigAll() string { return "ipconfig /all" }

// cmdRenameComputer names the computer NAME from its next restart on.
func cmdRenameComputer(name string) string {
	return "Rename-Computer -NewName " + Quote(name) + " -Force"
}
func cmdHostTime() string { return "Get-Date -Format o" }

func cmdMetadataRoute() string {
	return "Get-NetRoute -DestinationPrefix '169.254.169.254/32' -ErrorAction SilentlyContinue"
}

func cmdAddMetadataRoute(gateway string) string {
	return "route add 169.254.169.254 mask 255.255.255.255 " + gateway
}

func cmdRoutePrint() string { return "route print -4" }

func cmdGetEnv(name string) string {
	return "[Environment]::GetEnvironmentVariable(" + Quote(name) + ", 'Machine')"
}

func cmdSetEnv(name, value string) string {
	return "[Environment]::SetEnvironmentVariable(" + Quote(name) + ", " + Quote(value) + ", 'Machine')"
}

func cmdRemoveEnv(name string) string {
	return "[Environment]::SetEnvironmentVariable(" + Quote(name) + ", $null, 'Machine')"
}

func cmdServiceEvents(max int) string {
	return "Get-WinEvent -FilterHashtable @{LogName='System'; ProviderName='Service Control Manager'} -MaxEvents " +
		strconv.Itoa(max) + " | ForEach-Object { $_.TimeCreated.ToString('o') + ' ' + $_.LevelDisplayName + ' ' + $_.Message }"
}

// joinCommands puts several commands on one line: one round trip, the exit status is the last one's.
func joinCommands(cmds []string) string { return strings.Join(cmds, "; ") }

func quotedList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = Quote(s)
	}
	return strings.Join(quoted, ",")
}

func cmdTestPaths(paths []string) string { return "Test-Path -LiteralPath " + quotedList(paths) }

func cmdFileHashes(paths []string) string {
	return "Get-FileHash -LiteralPath " + quotedList(paths) +
		" -Algorithm SHA256 -ErrorAction SilentlyContinue | ForEach-Object { $_.Path + '=' + $_.Hash }"
}

// Pre-scripts of WMCO's services contract are PowerShell the contract carries: sent as they are.

// The host's network, for the network configuration (WMCO's network-conf.ps1 steps): the hybrid overlay HNS
// network, the VIP endpoint (hns.psm1's functions, imported first), the host's interfaces.

func cmdHNSNetwork(module, name string) string {
	return joinCommands([]string{cmdImportModule(module), "Get-HnsNetwork | Where-Object -Property Name -EQ -Value " + Quote(name) +
		" | ForEach-Object { $_.ID + '|' + $_.Type + '|' + $_.Subnets.AddressPrefix + '|' + $_.ManagementIP }"})
}

func cmdHNSEndpoint(module, name string) string {
	return joinCommands([]string{cmdImportModule(module), "Invoke-HNSRequest -Method GET -Type endpoints | Where-Object -Property Name -EQ -Value " +
		Quote(name) + " | " + endpointFields})
}

func cmdNewHNSEndpoint(module, networkID, name string) string {
	return joinCommands([]string{cmdImportModule(module), "New-HnsEndpoint -NetworkId " + Quote(networkID) + " -Name " + Quote(name) + " | " + endpointFields})
}

const endpointFields = "ForEach-Object { $_.ID + '|' + $_.MacAddress + '|' + $_.IPAddress }"

// cmdAttachHostEndpoint attaches an endpoint to the host's default network compartment, 1.
func cmdAttachHostEndpoint(module, id string) string {
	return joinCommands([]string{cmdImportModule(module), "Attach-HNSHostEndpoint -EndpointID " + Quote(id) + " -CompartmentID 1 | Out-Null"})
}

func cmdInterfaceAddresses() string {
	return "Get-NetIPConfiguration -AllCompartments -All -Detailed | ForEach-Object { $_.NetAdapter.LinkLayerAddress + '|' + $_.IPv4Address.IPAddress }"
}

// Windows Defender, for WMCO's Defender pre-script's steps.

func cmdDefenderRunning() string {
	return "Get-Process -Name 'MsMpEng' -ErrorAction SilentlyContinue | ForEach-Object { $_.Name }"
}

func cmdAddDefenderExclusion(path string) string {
	return "Add-MpPreference -ExclusionProcess " + Quote(path)
}

// cmdGCPHostname asks GCP's metadata server for the instance's host name (what WMCO's gcp-get-hostname.ps1
// asks).
func cmdGCPHostname() string {
	return "Invoke-RestMethod -UseBasicParsing -Headers @{'Metadata-Flavor'='Google'} -Uri http://metadata.google.internal/computeMetadata/v1/instance/hostname"
}
