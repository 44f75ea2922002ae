package windows

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An AWS host answers hostname with its NetBIOS name while AWS's metadata (WMCO's HOSTNAME_OVERRIDE
// pre-script, verbatim) gives the name the cloud provider knows it by; both are served inside the simulator.
func TestAWSHostNamesItselfOneWayAndTheMetadataAnother(t *testing.T) {
	th := startHost(t, Options{Platform: "AWS", Addr: "127.0.0.46:0", LoseMetadataRouteOnReboot: true})
	c := th.dial(t)
	r := run(t, c, "hostname")
	require.Equal(t, 0, r.code)
	assert.Regexp(t, `^EC2AMAZ-[0-9A-Z]{7}\r\n$`, r.stdout, "a NetBIOS name: upper case, 15 characters, no domain")

	const local = `Invoke-RestMethod -UseBasicParsing -Uri http://169.254.169.254/latest/meta-data/local-hostname`
	r = run(t, c, local)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "ip-127-0-0-46.ec2.internal\r\n", r.stdout)
	assert.Equal(t, "ip-127-0-0-46.ec2.internal", th.CloudHostname())
	r = run(t, c, `Invoke-RestMethod -UseBasicParsing -Uri http://169.254.169.254/latest/meta-data/nothing`)
	assert.Contains(t, r.stderr, "(404) Not Found")

	th.Reboot() // EC2Launch loses the metadata route on this host
	eventually(t, "back up", th.Up)
	c = th.dial(t)
	r = run(t, c, local)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "Unable to connect to the remote server", "no route to the link-local address")
}

func TestMetadataOnlyWhereThePlatformServesIt(t *testing.T) {
	azure := startHost(t, Options{Platform: "Azure"})
	r := run(t, azure.dial(t), `Invoke-RestMethod -UseBasicParsing -Uri http://169.254.169.254/latest/meta-data/local-hostname`)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "Unable to connect to the remote server")

	gcp := startHost(t, Options{Platform: "GCP", Hostname: "WIN-GCP-1"})
	c := gcp.dial(t)
	r = run(t, c, `Invoke-RestMethod -UseBasicParsing -Headers @{'Metadata-Flavor'='Google'} -Uri http://metadata.google.internal/computeMetadata/v1/instance/hostname`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "win-gcp-1.c.winsim-project.internal\r\n", r.stdout)
	r = run(t, c, `Invoke-RestMethod -UseBasicParsing -Uri http://metadata.google.internal/computeMetadata/v1/instance/hostname`)
	assert.Contains(t, r.stderr, "(403) Forbidden", "GCP's metadata server wants its header")
}

// hostname prints a Windows computer name: the simulator refuses to be given a DNS name instead.
func TestHostNameMustBeAComputerName(t *testing.T) {
	for _, bad := range []string{"ip-127-0-0-5.ec2.internal", "WIN-" + strings.Repeat("X", 60), "12345", "WIN_A"} {
		_, err := Start(Options{Hostname: bad})
		assert.ErrorContains(t, err, "is not a Windows computer name", bad)
	}
}

// WMCO's Defender pre-script's steps: MsMpEng runs on a default image, and Add-MpPreference records the
// exclusion; on an image without Defender, Get-Process finds no such process.
func TestDefenderExclusion(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	r := run(t, c, `Get-Process -Name 'MsMpEng' -ErrorAction SilentlyContinue | ForEach-Object { $_.Name }`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "MsMpEng\r\n", r.stdout)
	r = run(t, c, `Add-MpPreference -ExclusionProcess 'C:\k\containerd\containerd.exe'`)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{`C:\k\containerd\containerd.exe`}, th.DefenderExclusions())

	none := startHost(t, Options{NoDefender: true})
	r = run(t, none.dial(t), `Get-Process -Name 'MsMpEng' -ErrorAction SilentlyContinue | ForEach-Object { $_.Name }`)
	assert.Equal(t, 1, r.code)
	assert.Empty(t, r.stdout)
	assert.Empty(t, r.stderr, "silenced")
}
