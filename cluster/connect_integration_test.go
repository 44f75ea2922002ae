package cluster_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/wmcon/wmcon/cluster"
)

// connectWith writes kc to a file and connects with it as --kubeconfig would.
func connectWith(t *testing.T, kc *clientcmdapi.Config) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*kc, path))
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &path
	_, _, err := cluster.Connect(context.Background(), flags)
	return err
}

// userKubeconfig is the real server's kubeconfig for user (context and cluster "wmcon-test"), for a test to
// break one part of.
func userKubeconfig(t *testing.T, user string) *clientcmdapi.Config {
	t.Helper()
	kc, err := clientcmd.LoadFromFile(srv.Kubeconfig(user))
	require.NoError(t, err)
	return kc
}

func TestConnectWorksWithTheUntouchedKubeconfig(t *testing.T) {
	require.NoError(t, connectWith(t, userKubeconfig(t, "alice")))
}

func TestContextWhoseClusterIsMissingIsRefusedByName(t *testing.T) {
	renamed := userKubeconfig(t, "alice")
	renamed.Clusters["other"] = renamed.Clusters["wmcon-test"]
	delete(renamed.Clusters, "wmcon-test")
	none := userKubeconfig(t, "alice")
	delete(none.Clusters, "wmcon-test")
	for name, kc := range map[string]*clientcmdapi.Config{"another cluster defined": renamed, "no cluster at all": none} {
		t.Run(name, func(t *testing.T) {
			err := connectWith(t, kc)
			require.Error(t, err)
			assert.Contains(t, err.Error(), `context "wmcon-test" names the cluster "wmcon-test", which the kubeconfig does not define`)
			assert.NotContains(t, err.Error(), "localhost:8080")
			assert.NotContains(t, err.Error(), "no kubeconfig found")
		})
	}
}

func TestContextWhoseUserIsMissingIsRefusedByName(t *testing.T) {
	kc := userKubeconfig(t, "alice")
	delete(kc.AuthInfos, "alice")
	err := connectWith(t, kc)
	require.Error(t, err, "a missing user must not become an anonymous client")
	assert.Contains(t, err.Error(), `context "wmcon-test" names the user "alice", which the kubeconfig does not define`)
	assert.NotContains(t, err.Error(), "expired")
}

func TestMismatchedClientCertificateAndKeyAreRefusedBeforeDialling(t *testing.T) {
	alice, bob := userKubeconfig(t, "alice"), userKubeconfig(t, "bob")
	embedded := userKubeconfig(t, "alice")
	embedded.AuthInfos["alice"].ClientKeyData = bob.AuthInfos["bob"].ClientKeyData
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "alice.crt"), filepath.Join(dir, "bob.key")
	require.NoError(t, os.WriteFile(certFile, alice.AuthInfos["alice"].ClientCertificateData, 0o600))
	require.NoError(t, os.WriteFile(keyFile, bob.AuthInfos["bob"].ClientKeyData, 0o600))
	files := userKubeconfig(t, "alice")
	files.AuthInfos["alice"] = &clientcmdapi.AuthInfo{ClientCertificate: certFile, ClientKey: keyFile}
	for name, kc := range map[string]*clientcmdapi.Config{"embedded": embedded, "files": files} {
		t.Run(name, func(t *testing.T) {
			err := connectWith(t, kc)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "client certificate and key cannot be used together")
			assert.Contains(t, err.Error(), "private key does not match public key")
			assert.NotContains(t, err.Error(), "expired")
			assert.NotContains(t, err.Error(), "VPN")
		})
	}
}

// writePlugin writes an executable shell script named name and returns its path.
func writePlugin(t *testing.T, name, script string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o700))
	return path
}

func TestFailingOrBabblingCredentialPluginIsNamed(t *testing.T) {
	cases := map[string]struct{ script, want string }{
		"fails":          {"echo 'token expired, run the login' >&2; exit 3", "failed with exit code 3"},
		"prints garbage": {"echo not-json", "its output is not an ExecCredential JSON object"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			plugin := writePlugin(t, "wmcon-test-login", c.script)
			kc := userKubeconfig(t, "alice")
			kc.AuthInfos["alice"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
				APIVersion: "client.authentication.k8s.io/v1", Command: plugin,
				InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
			}}
			err := connectWith(t, kc)
			require.Error(t, err)
			assert.Contains(t, err.Error(), `credential plugin "`+plugin+`" failed`)
			assert.Contains(t, err.Error(), c.want)
			assert.NotContains(t, err.Error(), "VPN")
		})
	}
}

// TestHangingCredentialPluginIsBoundedAndNamed: client-go runs an exec plugin with no time limit and without
// watching any context; Ping gives up after its timeout with an error naming the plugin, and returns at once
// when its context ends.
func TestHangingCredentialPluginIsBoundedAndNamed(t *testing.T) {
	plugin := writePlugin(t, "wmcon-test-sso", "exec sleep 60")
	kc := userKubeconfig(t, "alice")
	kc.AuthInfos["alice"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		APIVersion: "client.authentication.k8s.io/v1", Command: plugin,
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}}
	cfg, err := clientcmd.NewDefaultClientConfig(*kc, nil).ClientConfig()
	require.NoError(t, err)
	clients, err := cluster.NewClients(cfg)
	require.NoError(t, err)

	err = cluster.Ping(context.Background(), clients, 500*time.Millisecond)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `credential plugin "`+plugin+`" gave no credentials within 500ms`)

	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	err = cluster.Ping(ctx, clients, time.Hour)
	assert.ErrorIs(t, err, context.Canceled, "a cancelled wait ends at once, not after the hour")
}

// TestSlowServerIsNotBlamedOnThePlugin: once the plugin gave credentials, a timeout is the server's.
func TestSlowServerIsNotBlamedOnThePlugin(t *testing.T) {
	// A listener that accepts and never answers: the request waits after the plugin's credentials.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	plugin := writePlugin(t, "wmcon-test-token", `echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}'`)
	cfg := &rest.Config{Host: "https://" + l.Addr().String(), TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		ExecProvider: &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: plugin,
			InteractiveMode: clientcmdapi.NeverExecInteractiveMode}}
	clients, err := cluster.NewClients(cfg)
	require.NoError(t, err)
	err = cluster.Ping(context.Background(), clients, 500*time.Millisecond)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "credential plugin")
}
