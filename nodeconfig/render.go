package nodeconfig

import (
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	logsapi "k8s.io/component-base/logs/api/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

// KubeletConfig renders C:\k\kubelet.conf: the JSON KubeletConfiguration WMCO writes for a Windows kubelet,
// field for field (held against WMCO 11's own file in conformance_test.go). What it leaves unset takes the
// kubelet's defaults, as with WMCO: webhook authentication and authorization among them.
func KubeletConfig(f Facts) ([]byte, error) {
	dns, err := ClusterDNS(f.ServiceNetwork)
	if err != nil {
		return nil, err
	}
	domain := f.ClusterDomain
	if domain == "" {
		domain = "cluster.local"
	}
	kc := kubeletv1beta1.KubeletConfiguration{
		TypeMeta:           metav1.TypeMeta{Kind: "KubeletConfiguration", APIVersion: "kubelet.config.k8s.io/v1beta1"},
		RotateCertificates: true,
		ServerTLSBootstrap: true,
		Authentication: kubeletv1beta1.KubeletAuthentication{
			X509:      kubeletv1beta1.KubeletX509Authentication{ClientCAFile: KubeletCAPath},
			Anonymous: kubeletv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(false)},
		},
		ClusterDomain: domain,
		ClusterDNS:    []string{dns},
		CgroupsPerQOS: ptr.To(false),
		// A slow image pull on Windows (multi-GB layers) must not time out the CRI call.
		RuntimeRequestTimeout: metav1.Duration{Duration: 10 * time.Minute},
		MaxPods:               250,
		// OpenShift's values for Linux workers.
		KubeAPIQPS:          ptr.To[int32](50),
		KubeAPIBurst:        100,
		SerializeImagePulls: ptr.To(false),
		Logging: logsapi.LoggingConfiguration{
			FlushFrequency: logsapi.TimeOrMetaDuration{Duration: metav1.Duration{Duration: 5 * time.Second}, SerializeAsString: true},
		},
		EnableSystemLogHandler: ptr.To(true),
		EnableSystemLogQuery:   ptr.To(true),
		// NodeLogQuery lets oc adm node-logs read the node's logs through the API server.
		FeatureGates:           map[string]bool{"NodeLogQuery": true, "RotateKubeletServerCertificate": true},
		ContainerLogMaxSize:    "50Mi",
		EnforceNodeAllocatable: []string{"none"},
		// Hard eviction is not enforced on Windows, but the thresholds are taken off the node's allocatable;
		// these are the signals Windows supports.
		EvictionHard:             map[string]string{"nodefs.available": "10%", "imagefs.available": "15%"},
		SystemReserved:           map[string]string{"cpu": "500m", "ephemeral-storage": "1Gi", "memory": "2Gi"},
		ContainerRuntimeEndpoint: "npipe://./pipe/containerd-containerd",
		RegisterNode:             ptr.To(true), // so that registerWithTaints applies
		RegisterWithTaints:       []corev1.Taint{{Key: "os", Value: "Windows", Effect: corev1.TaintEffectNoSchedule}},
		// Windows keeps its resolver settings in the registry, not in a file.
		ResolverConfig: ptr.To(""),
	}
	b, err := json.Marshal(kc)
	if err != nil {
		return nil, fmt.Errorf("render kubelet.conf: %w", err)
	}
	return b, nil
}

// BootstrapKubeconfig renders C:\k\bootstrap-kubeconfig: the internal API server URL, the CA the kubelet
// trusts for it (embedded, so the file stands alone) and the bootstrap token.
func BootstrapKubeconfig(f Facts) ([]byte, error) {
	return tokenKubeconfig(f.APIServerURL, f.BootstrapCA, "kubelet-bootstrap", f.BootstrapToken, "the bootstrap kubeconfig")
}

// WICDKubeconfig renders C:\k\wicd-kubeconfig as WMCO writes it from its node daemon's service-account
// token secret: the API server, the secret's CA and its token, user "wicd".
func WICDKubeconfig(f Facts) ([]byte, error) {
	return tokenKubeconfig(f.APIServerURL, f.WICDCA, "wicd", f.WICDToken, WICDKubeconfigPath)
}

// tokenKubeconfig is a stand-alone kubeconfig for one token: cluster "cluster", user and context named user.
func tokenKubeconfig(server string, ca []byte, user, token, what string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cluster"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[user] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: user}
	cfg.CurrentContext = user
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", what, err)
	}
	return b, nil
}

// CredentialProviderConfig renders the kubelet's image credential provider configuration on AWS
// (ecr-credential-provider for ECR registries).
func CredentialProviderConfig() []byte {
	return []byte(`apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
  - name: ecr-credential-provider
    matchImages:
      - "*.dkr.ecr.*.amazonaws.com"
      - "*.dkr.ecr.*.amazonaws.com.cn"
      - "*.dkr.ecr-fips.*.amazonaws.com"
    defaultCacheDuration: "12h"
    apiVersion: credentialprovider.kubelet.k8s.io/v1
`)
}
