package windows

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHNSNetworksNeedTheModuleAndCanBeRemoved(t *testing.T) {
	th := startHost(t, Options{Configured: true})
	eventually(t, "hybrid-overlay-node runs", func() bool { return th.ServiceRunning("hybrid-overlay-node") })
	assert.Equal(t, hybridOverlayNetworks, th.HNSNetworks(), "a running hybrid-overlay-node created its networks")
	require.NoError(t, th.RemoveFile(HNSModule)) // WMCO's payload put it there
	c := th.dial(t)
	list := `Import-Module -DisableNameChecking -Name 'C:\Temp\hns.psm1'; Get-HnsNetwork | ForEach-Object { $_.Name }`

	r := run(t, c, list)
	assert.Equal(t, 1, r.code, "no module yet")
	assert.Contains(t, r.stderr, "The specified module 'C:\\Temp\\hns.psm1' was not loaded")
	assert.Contains(t, r.stderr, "The term 'Get-HnsNetwork' is not recognized")

	require.NoError(t, th.WriteFile(HNSModule, []byte("# hns module\n")))
	r = run(t, c, list)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, hybridOverlayNetworks, lines(r.stdout))
	r = run(t, c, `Get-HnsNetwork`)
	assert.Equal(t, 1, r.code, "the import lasts one session only")

	r = run(t, c, `Import-Module -DisableNameChecking -Name 'C:\Temp\hns.psm1'; Get-HnsNetwork | Where-Object -Property Name -EQ -Value 'ovnkubernetesHYBRIDoverlaynetwork' | Remove-HnsNetwork`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{"BaseOVNKubernetesHybridOverlayNetwork"}, th.HNSNetworks(), "-EQ compares case-insensitively")
	r = run(t, c, `Import-Module -DisableNameChecking -Name 'C:\Temp\hns.psm1'; Get-HnsNetwork | Where-Object -Property Name -EQ -Value 'nothing' | Remove-HnsNetwork`)
	assert.Equal(t, 0, r.code, "no match removes nothing")
	assert.Len(t, th.HNSNetworks(), 1)
}

// The VIP endpoint as WMCO's network-conf.ps1 makes it with hns.psm1: created on the hybrid overlay network
// with an address of the node's subnet, it has an address on the host only once attached to the host's
// compartment, and that address is found by the endpoint's MAC among the host's interfaces.
func TestVIPEndpointGetsItsAddressOnTheHostOnlyOnceAttached(t *testing.T) {
	th := startHost(t, Options{Configured: true, Addr: "127.0.0.44:0"})
	eventually(t, "hybrid-overlay-node runs", func() bool { return th.ServiceRunning("hybrid-overlay-node") })
	th.RemoveHNSEndpoint("VIPEndpoint") // before WMCO's network step ran
	c := th.dial(t)
	const imp = `Import-Module -DisableNameChecking -Name 'C:\Temp\hns.psm1'; `

	r := run(t, c, imp+`Get-HnsNetwork | Where-Object -Property Name -EQ -Value 'OVNKubernetesHybridOverlayNetwork' | ForEach-Object { $_.ID + '|' + $_.Type + '|' + $_.Subnets.AddressPrefix + '|' + $_.ManagementIP }`)
	require.Equal(t, 0, r.code, r.stderr)
	fields := strings.Split(strings.TrimSpace(r.stdout), "|")
	require.Len(t, fields, 4, r.stdout)
	netID := fields[0]
	assert.Equal(t, []string{"Overlay", "127.44.64.0/24", "127.0.0.44"}, fields[1:], "the node's subnet, and the host's own address as management IP")

	r = run(t, c, imp+`Invoke-HNSRequest -Method GET -Type endpoints | Where-Object -Property Name -EQ -Value 'VIPEndpoint' | ForEach-Object { $_.ID }`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, strings.TrimSpace(r.stdout), "no endpoint yet")

	r = run(t, c, `New-HnsEndpoint -NetworkId '`+netID+`' -Name 'VIPEndpoint'`)
	assert.Contains(t, r.stderr, "The term 'New-HnsEndpoint' is not recognized", "hns.psm1's function exists only once imported")
	r = run(t, c, imp+`New-HnsEndpoint -NetworkId '`+netID+`' -Name 'VIPEndpoint' | ForEach-Object { $_.ID + '|' + $_.MacAddress + '|' + $_.IPAddress }`)
	require.Equal(t, 0, r.code, r.stderr)
	ep := strings.Split(strings.TrimSpace(r.stdout), "|")
	require.Len(t, ep, 3, r.stdout)
	assert.Equal(t, "127.44.64.2", ep[2], "the first free address after the subnet's gateway")
	assert.Regexp(t, `^00-15-5D(-[0-9A-F]{2}){3}$`, ep[1])

	addrs := `Get-NetIPConfiguration -AllCompartments -All -Detailed | ForEach-Object { $_.NetAdapter.LinkLayerAddress + '|' + $_.IPv4Address.IPAddress }`
	r = run(t, c, addrs)
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, ep[1], "not attached: no vNIC on the host")

	r = run(t, c, imp+`Attach-HNSHostEndpoint -EndpointID '`+ep[0]+`' -CompartmentID 1`)
	require.Equal(t, 0, r.code, r.stderr)
	r = run(t, c, addrs)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, lines(r.stdout), ep[1]+"|127.44.64.2", "attached: its vNIC has the endpoint's address")
	assert.Contains(t, lines(r.stdout), nicMAC+"|127.0.0.44", "the NIC has the host's own address")
	assert.Equal(t, []HNSEndpoint{{ID: ep[0], Name: "VIPEndpoint", NetworkID: netID, MAC: ep[1], IP: "127.44.64.2", Compartment: 1}}, th.HNSEndpoints())

	r = run(t, c, imp+`Attach-HNSHostEndpoint -EndpointID '`+ep[0]+`' -CompartmentID 1`)
	assert.Equal(t, 1, r.code, "attached twice")
	r = run(t, c, imp+`New-HnsEndpoint -NetworkId 'no-such-network' -Name 'VIPEndpoint'`)
	assert.Contains(t, r.stderr, "Element not found.")
}

// WMCO's NODE_IP pre-script, verbatim: the IPv4 address of the interface holding the default route.
func TestNodeIPPreScriptPrintsTheDefaultRoutesAddress(t *testing.T) {
	th := startHost(t, Options{Addr: "127.0.0.45:0"})
	r := run(t, th.dial(t), `(Get-NetRoute -DestinationPrefix '0.0.0.0/0' | Get-NetIpAddress -AddressFamily IPv4 -ifIndex {$_.ifIndex}[0]).IPAddress`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "127.0.0.45\r\n", r.stdout)
}
