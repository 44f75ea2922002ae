package kubeapi

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// AdminConfig is a client config for AdminUser (system:masters). Each call returns a fresh copy.
func (s *Server) AdminConfig() *rest.Config { return rest.CopyConfig(s.admin) }

// UserConfig is a client config authenticated as user in groups (plus system:authenticated), with a client
// certificate minted for it, so RBAC decides what it may do. It panics only if the certificate cannot be
// made, which means the machine's crypto is broken.
func (s *Server) UserConfig(user string, groups ...string) *rest.Config {
	cfg, err := s.restConfig(user, groups)
	if err != nil {
		panic(fmt.Sprintf("testserver: client certificate for %q: %v", user, err))
	}
	cfg.Host = s.Host()
	return cfg
}

func (s *Server) restConfig(user string, groups []string) (*rest.Config, error) {
	pair, err := s.ca.clientPair(user, groups)
	if err != nil {
		return nil, err
	}
	return &rest.Config{
		Host: s.Host(),
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   s.ca.certPEM,
			CertData: pair.certPEM,
			KeyData:  pair.keyPEM,
		},
		// Tests create objects in bursts; the client-side default (5 QPS) would only slow them down.
		QPS:   200,
		Burst: 400,
	}, nil
}

// AdminKubeconfig is the path of a kubeconfig file for AdminUser.
func (s *Server) AdminKubeconfig() string { return s.writeKubeconfig(AdminUser, s.AdminConfig()) }

// Kubeconfig is the path of a kubeconfig file for user in groups, for tests of command-line flags
// (--kubeconfig) and of code that loads kubeconfig files. The file embeds the user's key; it lives in the
// server's temp dir, readable only by its owner, and is removed by Stop.
func (s *Server) Kubeconfig(user string, groups ...string) string {
	return s.writeKubeconfig(user, s.UserConfig(user, groups...))
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func (s *Server) writeKubeconfig(user string, cfg *rest.Config) string {
	const name = "wmcon-test"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: user, Namespace: metav1.NamespaceDefault}
	kc.CurrentContext = name
	file := "kubeconfig-" + strings.Trim(unsafeFileChars.ReplaceAllString(user, "_"), "_") + ".yaml"
	path := filepath.Join(s.dir, file)
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		panic(fmt.Sprintf("testserver: write kubeconfig for %q: %v", user, err))
	}
	return path
}

// InstallCRDs loads more CRDs (for example ones left out with WithCRDs, to test an API that appears while
// the console runs) and waits until they are Established.
func (s *Server) InstallCRDs(t testing.TB, crds ...CRD) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	if err := s.installCRDs(ctx, crds); err != nil {
		t.Fatalf("install CRDs: %v", err)
	}
}

// DeleteCRDs removes CRDs and their objects and waits until they are gone. On a shared server, put them
// back with InstallCRDs before the test ends (t.Cleanup) so other tests still find them.
func (s *Server) DeleteCRDs(t testing.TB, crds ...CRD) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	client, err := apiextensionsclient.NewForConfig(s.admin)
	if err != nil {
		t.Fatalf("apiextensions client: %v", err)
	}
	if err := deleteCRDs(ctx, client, crds); err != nil {
		t.Fatalf("delete CRDs: %v", err)
	}
}

func (s *Server) installCRDs(ctx context.Context, crds []CRD) error {
	if len(crds) == 0 {
		return nil
	}
	client, err := apiextensionsclient.NewForConfig(s.admin)
	if err != nil {
		return fmt.Errorf("apiextensions client: %w", err)
	}
	if err := installCRDs(ctx, client, crds); err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(s.admin)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	for _, name := range crds {
		if err := warmUpCustomResources(ctx, dyn, name); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) createNamespaces(ctx context.Context, names []string) error {
	client, err := kubernetes.NewForConfig(s.admin)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	for _, name := range names {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		_, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s: %w", name, err)
		}
	}
	return nil
}
