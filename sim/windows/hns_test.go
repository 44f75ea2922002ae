package windows

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHNSNetworksNeedTheModuleAndCanBeRemoved(t *testing.T) {
	th := startHost(t, Options{Configured: true})
	eventually(t, "hybrid-overlay-node runs", func() bool { return th.ServiceRunning("hybrid-overlay-node") })
	assert.Equal(t, hybridOverlayNetworks, th.HNSNetworks(), "a running hybrid-overlay-node created its networks")
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
