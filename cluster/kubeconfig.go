package cluster

import (
	"crypto/tls"
	"fmt"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/wmcon/wmcon/localfile"
)

// checkContextEntries refuses a context that names a cluster or user the kubeconfig does not define. client-go
// would quietly fill the gap: a missing cluster becomes http://localhost:8080 and a missing user becomes an
// anonymous client, and the user then reads about an unreachable server or rejected credentials instead of the
// broken kubeconfig entry.
func checkContextEntries(raw clientcmdapi.Config, flags *genericclioptions.ConfigFlags) error {
	name := raw.CurrentContext
	if s := flagValue(flags.Context); s != "" {
		name = s
	}
	kctx, ok := raw.Contexts[name]
	if name == "" || !ok {
		return nil // no context at all, or an unknown one: the loader's own errors say that
	}
	clusterName := kctx.Cluster
	if s := flagValue(flags.ClusterName); s != "" {
		clusterName = s
	}
	if _, ok := raw.Clusters[clusterName]; !ok && flagValue(flags.APIServer) == "" {
		if clusterName == "" {
			return fmt.Errorf("the kubeconfig context %q names no cluster: fix the context's cluster entry, pass --server, or log in again with 'oc login'", name)
		}
		return fmt.Errorf("the kubeconfig context %q names the cluster %q, which the kubeconfig does not define: "+
			"add that cluster entry (or pick another context with --context), or log in again with 'oc login'", name, clusterName)
	}
	userName := kctx.AuthInfo
	if s := flagValue(flags.AuthInfoName); s != "" {
		userName = s
	}
	if _, ok := raw.AuthInfos[userName]; !ok && userName != "" && !credentialFlagsGiven(flags) {
		return fmt.Errorf("the kubeconfig context %q names the user %q, which the kubeconfig does not define: "+
			"add that user entry (or pick another context with --context), or log in again with 'oc login'", name, userName)
	}
	return nil
}

// credentialFlagsGiven reports whether credentials come from the command line instead of a kubeconfig user.
func credentialFlagsGiven(flags *genericclioptions.ConfigFlags) bool {
	return flagValue(flags.BearerToken) != "" || flagValue(flags.CertFile) != "" || flagValue(flags.Username) != ""
}

func flagValue(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// checkClientPair refuses a client certificate and key that are not a pair. client-go would only find out
// while dialling, logging the failure over and over and then reporting an unreachable server.
func checkClientPair(cfg *rest.Config) error {
	certPEM, keyPEM := cfg.CertData, cfg.KeyData
	var err error
	if len(certPEM) == 0 && cfg.CertFile != "" {
		if certPEM, err = localfile.Read(cfg.CertFile, localfile.MaxKubeconfig); err != nil {
			return fmt.Errorf("the kubeconfig's client certificate cannot be read: %w", err)
		}
	}
	if len(keyPEM) == 0 && cfg.KeyFile != "" {
		if keyPEM, err = localfile.Read(cfg.KeyFile, localfile.MaxKey); err != nil {
			return fmt.Errorf("the kubeconfig's client key cannot be read: %w", err)
		}
	}
	if len(certPEM) == 0 && len(keyPEM) == 0 {
		return nil
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return fmt.Errorf("the kubeconfig's client certificate and key cannot be used together (%v): "+
			"client-certificate and client-key must come from the same login; log in again with 'oc login'", err)
	}
	return nil
}

// explainPluginError names the exec credential plugin when it, not the network, is why a request failed.
// client-go flattens the plugin's error into text ("getting credentials: ..."), so the text is all there is.
func explainPluginError(cfg *rest.Config, err error) (error, bool) {
	if cfg.ExecProvider == nil {
		return nil, false
	}
	msg := err.Error()
	i := strings.Index(msg, "getting credentials: ")
	if i < 0 {
		return nil, false
	}
	cause := msg[i+len("getting credentials: "):]
	if strings.HasPrefix(cause, "decoding stdout") {
		cause = "its output is not an ExecCredential JSON object"
	}
	return fmt.Errorf("the kubeconfig's credential plugin %q failed (%s), so no request reached the API server: "+
		"run the plugin by hand to see why, then log in again with it", cfg.ExecProvider.Command, cause), true
}
