package userdata_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"

	"github.com/wmcon/wmcon/cluster/userdata"
	"github.com/wmcon/wmcon/remote/sshkey"
)

var update = flag.Bool("update-userdata", false, "rewrite the user data golden files")

// fixedKey is an ed25519 key from a fixed seed, so the golden files do not change from run to run.
func fixedKey(t *testing.T) ssh.PublicKey {
	t.Helper()
	seed := make([]byte, ed25519.SeedSize)
	copy(seed, "wmcon user data golden file key")
	s, err := ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(seed))
	require.NoError(t, err)
	return s.PublicKey()
}

// One golden script per platform wmcon knows: the wrapper everywhere but GCP, the EC2Launch part on AWS only.
func TestScriptGoldenPerPlatform(t *testing.T) {
	pub := fixedKey(t)
	for _, p := range []string{"aws", "azure", "gcp", "vsphere", "nutanix", "none", "baremetal"} {
		t.Run(p, func(t *testing.T) {
			got := userdata.ForKey(pub, p)
			path := filepath.Join("testdata", "userdata-"+p+".golden")
			if *update {
				require.NoError(t, os.WriteFile(path, got, 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./cluster/userdata -update-userdata to write it")
			assert.Equal(t, string(want), string(got))

			s := string(got)
			if p == "gcp" {
				assert.NotContains(t, s, "<powershell>", "GCP's agent runs the bare script")
			} else {
				assert.True(t, strings.HasPrefix(s, "<powershell>\n"), "EC2Launch / cloudbase-init need the wrapper")
				assert.True(t, strings.HasSuffix(s, "</powershell>\n<persist>true</persist>\n"))
			}
			assert.Equal(t, p == "aws", strings.Contains(s, "run-task add-routes --persistent"), "metadata routes on AWS only")
			assert.Equal(t, p == "aws", strings.Contains(s, "[version]'"+userdata.MinEC2LaunchVersion+"'"))
			for _, must := range []string{"OpenSSH.Server~~~~0.0.1.0", "foreach ($port in 22, 10250, 9182)",
				"'PasswordAuthentication no'", "administrators_authorized_keys", "'*S-1-5-32-544:F'", "'*S-1-5-18:F'", "/inheritance:r"} {
				assert.Contains(t, s, must)
			}
		})
	}
}

// The script holds the key exactly as ssh.MarshalAuthorizedKey writes it, newline included, and the key
// found in it is the private key's public half, for every key type WMCO accepts.
func TestScriptKeyRoundTripsToThePrivateKey(t *testing.T) {
	_, edPriv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	rsaPriv, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	for name, priv := range map[string]any{"ed25519": edPriv, "rsa": rsaPriv} {
		t.Run(name, func(t *testing.T) {
			signer, err := ssh.NewSignerFromKey(priv)
			require.NoError(t, err)
			script := string(userdata.ForKey(signer.PublicKey(), "AWS"))
			assert.Contains(t, script, "@'\n"+string(ssh.MarshalAuthorizedKey(signer.PublicKey()))+"'@\n")
			found, err := sshkey.FindInUserData(script)
			require.NoError(t, err)
			assert.Equal(t, ssh.FingerprintSHA256(signer.PublicKey()), ssh.FingerprintSHA256(found))
		})
	}
}

// A key line given without its newline renders the same as with it.
func TestScriptAddsTheTrailingNewline(t *testing.T) {
	line := string(ssh.MarshalAuthorizedKey(fixedKey(t)))
	assert.Equal(t, string(userdata.Script(line, "Azure")), string(userdata.Script(strings.TrimSuffix(line, "\n"), "Azure")))
	assert.Equal(t, string(userdata.Script(line, "GCP")), string(userdata.Script(line, "gcp")), "platform compared without case")
}

// What wmcon renders for a platform is what that platform's agent runs, and not what another's runs.
func TestRunsMatchesTheRenderedWrapper(t *testing.T) {
	pub := fixedKey(t)
	for _, p := range []string{"AWS", "Azure", "GCP", "VSphere", "Nutanix", "None", "BareMetal", ""} {
		assert.NoError(t, userdata.Runs(userdata.ForKey(pub, p), p), p)
	}
	err := userdata.Runs(userdata.ForKey(pub, "AWS"), "GCP")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "GCP's agent does not run")
	err = userdata.Runs(userdata.ForKey(pub, "GCP"), "Azure")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not wrapped in <powershell>")
}
