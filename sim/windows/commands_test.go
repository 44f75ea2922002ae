package windows

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFileCommandsWithAwkwardQuotes(t *testing.T) {
	th := startHost(t, Options{Addr: "127.0.0.2:0"})
	c := th.dial(t)
	dir := `C:\k\it's ’quoted’ dir`
	file := dir + `\a‘b’.exe`
	content := []byte("binary\x00content\n")

	r := run(t, c, fmt.Sprintf("New-Item -ItemType Directory -Force -Path %s | Out-Null", q(dir)))
	require.Equal(t, result{}, r)
	require.NoError(t, th.WriteFile(file, content))

	assert.Equal(t, "True\r\n", run(t, c, "Test-Path -LiteralPath "+q(file)).stdout)
	assert.Equal(t, "False\r\n", run(t, c, "Test-Path -LiteralPath "+q(dir+`\missing`)).stdout)
	assert.Equal(t, "True\r\n", run(t, c, "Test-Path -LiteralPath "+q(strings.ToUpper(file))).stdout, "NTFS is case-insensitive")

	sum := sha256.Sum256(content)
	r = run(t, c, fmt.Sprintf("(Get-FileHash -LiteralPath %s -Algorithm SHA256).Hash", q(file)))
	assert.Equal(t, strings.ToUpper(hex.EncodeToString(sum[:]))+"\r\n", r.stdout)
	assert.Equal(t, 0, r.code)

	assert.Equal(t, fmt.Sprintf("%d\r\n", len(content)), run(t, c, fmt.Sprintf("(Get-Item -LiteralPath %s).Length", q(file))).stdout)
	assert.Equal(t, "a‘b’.exe\r\n", run(t, c, "Get-ChildItem -LiteralPath "+q(dir)+" -Name").stdout)
}

func TestFileHashOfMissingFileFails(t *testing.T) {
	th := startHost(t, Options{})
	r := run(t, th.dial(t), `(Get-FileHash -LiteralPath 'C:\k\nope.exe' -Algorithm SHA256).Hash`)
	assert.Equal(t, 1, r.code)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, `Cannot find path 'C:\k\nope.exe' because it does not exist.`)
}

func TestMoveAndRemove(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	require.NoError(t, th.WriteFile(`C:\k\kubelet.exe.tmp`, []byte("new")))
	require.NoError(t, th.WriteFile(`C:\k\kubelet.exe`, []byte("old")))

	r := run(t, c, `Move-Item -LiteralPath 'C:\k\kubelet.exe.tmp' -Destination 'C:\k\kubelet.exe' -Force`)
	require.Equal(t, result{}, r)
	got, err := th.ReadFile(`C:\k\kubelet.exe`)
	require.NoError(t, err)
	assert.Equal(t, "new", string(got))
	assert.False(t, th.Exists(`C:\k\kubelet.exe.tmp`))

	require.NoError(t, th.WriteFile(`C:\k\other`, []byte("x")))
	r = run(t, c, `Move-Item -LiteralPath 'C:\k\other' -Destination 'C:\k\kubelet.exe'`)
	assert.Equal(t, 1, r.code, "without -Force an existing destination is an error")
	assert.Contains(t, r.stderr, "Cannot create a file when that file already exists.")

	r = run(t, c, `Remove-Item -LiteralPath 'C:\k\kubelet.exe' -Force`)
	require.Equal(t, result{}, r)
	assert.False(t, th.Exists(`C:\k\kubelet.exe`))

	r = run(t, c, `Remove-Item -LiteralPath 'C:\k\kubelet.exe' -Force`)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "because it does not exist")

	r = run(t, c, `Remove-Item -LiteralPath 'C:\k' -Force`)
	assert.Equal(t, 1, r.code, "a non-empty directory needs -Recurse")
	r = run(t, c, `Remove-Item -LiteralPath 'C:\k' -Force -Recurse`)
	assert.Equal(t, 0, r.code)
	assert.False(t, th.Exists(`C:\k\other`))
}

func TestNTFSRefusesColonInName(t *testing.T) {
	th := startHost(t, Options{})
	r := run(t, th.dial(t), `New-Item -ItemType Directory -Force -Path 'C:\k\containerd\registries\quay.io:443' | Out-Null`)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "The given path's format is not supported.")
}

func TestContentLineCountAndTail(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	require.NoError(t, th.WriteFile(`C:\var\log\x.log`, []byte("one\r\n\r\nthree\nfour\n")))
	assert.Equal(t, "4\r\n", run(t, c, `@(Get-Content -LiteralPath 'C:\var\log\x.log').Count`).stdout, "empty lines count")
	assert.Equal(t, "three\r\nfour\r\n", run(t, c, `Get-Content -LiteralPath 'C:\var\log\x.log' -Tail 2`).stdout)
	require.NoError(t, th.WriteFile(`C:\var\log\empty.log`, nil))
	assert.Equal(t, "0\r\n", run(t, c, `@(Get-Content -LiteralPath 'C:\var\log\empty.log').Count`).stdout)
}

func TestJoinedStatementsExitWithTheLast(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	r := run(t, c, `Nope-Thing; hostname`)
	assert.Equal(t, 0, r.code)
	assert.Equal(t, th.Hostname()+"\r\n", r.stdout)
	assert.Contains(t, r.stderr, "Nope-Thing : The term 'Nope-Thing' is not recognized")

	r = run(t, c, `hostname; Test-Path -LiteralPath 'C:\x'; Remove-Item -LiteralPath 'C:\x' -Force`)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, []string{th.Hostname(), "False"}, lines(r.stdout))
	assert.Len(t, th.Commands(), 2, "one exec per round trip")
}

func TestUnknownCommandFailsLikePowerShell(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	for _, cmd := range []string{"Get-Printer", "sc query kubelet", "ls", "Set-Content -LiteralPath 'C:\\x' -Value 'y'"} {
		r := run(t, c, cmd)
		assert.Equal(t, 1, r.code, cmd)
		assert.Empty(t, r.stdout, cmd)
		assert.NotEmpty(t, r.stderr, cmd)
	}
	r := run(t, c, "Get-Printer")
	assert.True(t, strings.HasPrefix(r.stderr, "Get-Printer : The term 'Get-Printer' is not recognized as the name of a cmdlet, function, script file, or operable program.\r\n"), r.stderr)
	r = run(t, c, `Test-Path -LiteralPath 'C:\a`)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "The string is missing the terminator")
	r = run(t, c, `Test-Path -Literal 'C:\a'`)
	assert.Contains(t, r.stderr, "A parameter cannot be found that matches parameter name 'Literal'.")
}

func TestGetHelpInPowerShell(t *testing.T) {
	th := startHost(t, Options{})
	r := run(t, th.dial(t), "Get-Help")
	assert.Equal(t, 0, r.code)
	assert.NotEmpty(t, r.stdout)
}

func TestEnvironmentVariables(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	get := `[Environment]::GetEnvironmentVariable('HTTP_PROXY', 'Machine')`
	assert.Equal(t, result{}, run(t, c, get))
	value := `http://proxy.example:3128/it's`
	assert.Equal(t, result{}, run(t, c, fmt.Sprintf(`[Environment]::SetEnvironmentVariable('HTTP_PROXY', %s, 'Machine')`, q(value))))
	assert.Equal(t, value+"\r\n", run(t, c, get).stdout)
	v, ok := th.Env("http_proxy")
	assert.True(t, ok)
	assert.Equal(t, value, v)
	assert.Equal(t, result{}, run(t, c, `[Environment]::SetEnvironmentVariable('HTTP_PROXY', $null, 'Machine')`))
	_, ok = th.Env("HTTP_PROXY")
	assert.False(t, ok)
	assert.Equal(t, result{}, run(t, c, get))
}

func TestHostnameIpconfigAndRoutes(t *testing.T) {
	th := startHost(t, Options{Platform: "AWS", Gateway: "127.0.7.1"})
	c := th.dial(t)
	assert.Regexp(t, `^EC2AMAZ-[0-9A-Z]{7}\r\n$`, run(t, c, "hostname").stdout)
	assert.Contains(t, run(t, c, "ipconfig").stdout, "   Default Gateway . . . . . . . . . : 127.0.7.1\r\n")

	metadata := `Get-NetRoute -DestinationPrefix '169.254.169.254/32' -ErrorAction SilentlyContinue`
	r := run(t, c, metadata)
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "169.254.169.254/32")
	assert.Contains(t, r.stdout, "127.0.7.1")
	assert.Contains(t, run(t, c, "route print -4").stdout, "  169.254.169.254  255.255.255.255        127.0.7.1")

	r = run(t, c, "route add 169.254.169.254 mask 255.255.255.255 127.0.7.1")
	assert.Equal(t, 1, r.code, "the route already exists")
	assert.Contains(t, r.stdout, "The object already exists")
}

func TestMetadataRouteAbsentOffAWS(t *testing.T) {
	th := startHost(t, Options{Platform: "VSphere"})
	c := th.dial(t)
	r := run(t, c, `Get-NetRoute -DestinationPrefix '169.254.169.254/32' -ErrorAction SilentlyContinue`)
	assert.Empty(t, r.stdout)
	assert.Empty(t, r.stderr, "SilentlyContinue hides the error")
	assert.Equal(t, 1, r.code, "PowerShell still sets $? to false")
	assert.False(t, th.HasMetadataRoute())
	r = run(t, c, "route add 169.254.169.254 mask 255.255.255.255 127.0.0.1")
	assert.Equal(t, result{stdout: " OK!\r\n"}, r)
	assert.True(t, th.HasMetadataRoute())
	r = run(t, c, "route add 169.254.169.254 mask 255.255.255.255 not-an-ip")
	assert.NotEqual(t, 0, r.code)
}

func TestEmptyPathIsABindingError(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	for _, cmd := range []string{`Test-Path -LiteralPath ''`, `Remove-Item -LiteralPath '' -Force`, `Get-Content -LiteralPath '' -Tail 5`} {
		r := run(t, c, cmd)
		assert.Equal(t, 1, r.code, cmd)
		assert.Empty(t, r.stdout, cmd)
		assert.Contains(t, r.stderr, "because it is an empty string", cmd)
	}
	assert.True(t, th.Exists(`C:\Users\Administrator`), "nothing was removed")
}
