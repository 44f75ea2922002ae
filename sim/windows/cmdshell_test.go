package windows

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
)

func encoded(script string) string {
	return "powershell.exe -NonInteractive -ExecutionPolicy Bypass -EncodedCommand " + EncodeCommand(script)
}

func TestCmdShell(t *testing.T) {
	th := startHost(t, Options{Shell: "cmd", Configured: true})
	c := th.dial(t)

	r := run(t, c, "Get-Help")
	assert.NotEqual(t, 0, r.code)
	assert.Equal(t, "'Get-Help' is not recognized as an internal or external command,\r\noperable program or batch file.\r\n", r.stderr)

	path := `C:\k\it's ’odd’.txt`
	require.NoError(t, th.WriteFile(path, []byte("x\n")))
	script := fmt.Sprintf("Test-Path -LiteralPath %s; hostname; sc.exe qc nope", q(path))
	r = run(t, c, encoded(script))
	assert.Equal(t, 1, r.code, "the last statement failed")
	out := lines(r.stdout)
	require.GreaterOrEqual(t, len(out), 3)
	assert.Equal(t, []string{"True", th.Hostname(), "[SC] OpenService FAILED 1060:"}, out[:3])
	assert.Contains(t, th.Executed(), script, "the decoded script is what ran")

	r = run(t, c, "sc.exe qc nope")
	assert.Equal(t, 1060, r.code, "cmd.exe passes a native exit code through")
	assert.Contains(t, run(t, c, "ipconfig").stdout, "Default Gateway")

	r = run(t, c, "powershell.exe -NonInteractive -EncodedCommand !!notbase64")
	assert.NotEqual(t, 0, r.code)
}

func TestEncodeCommandRoundTrip(t *testing.T) {
	for _, s := range []string{"", "hostname", "Test-Path -LiteralPath 'C:\\a’’b'", "emoji 😀 astral"} {
		got, err := decodeEncodedCommand(EncodeCommand(s))
		require.NoError(t, err)
		assert.Equal(t, s, got)
	}
}

func TestFleet(t *testing.T) {
	signer := newSigner(t)
	f, err := StartFleet(3, Options{AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()}, Platform: "AWS", Configured: true})
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	require.Len(t, f.Hosts, 3)
	seen := map[string]bool{}
	for i, h := range f.Hosts {
		assert.Regexp(t, fmt.Sprintf(`^127\.0\.0\.%d:\d+$`, i+2), h.Addr())
		seen[h.Hostname()] = true
		seen[string(h.HostKey().Marshal())] = true
	}
	assert.Len(t, seen, 6, "distinct names and host keys")
	th := &testHost{Host: f.Hosts[1], signer: signer}
	assert.Equal(t, th.Hostname()+"\r\n", run(t, th.dial(t), "hostname").stdout)
}
