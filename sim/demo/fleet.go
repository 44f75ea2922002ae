package demo

import (
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/registries"
	"github.com/wmcon/wmcon/sim/windows"
)

// The demo's cluster proxy, and the drift its hosts show: most nodes are in step, one was configured before
// the mirrors changed, one lost NO_PROXY and has an old CA bundle.
const (
	demoProxy     = "http://proxy.demo.internal:3128"
	demoNoProxy   = ".cluster.local,.svc,127.0.0.0/8,172.30.0.0/16,api-int.demo.example.com"
	demoCAName    = "user-ca-bundle"
	staleMirrorIP = "127.0.0.4"
	staleProxyIP  = "127.0.0.5"
)

var demoCA = []byte("-----BEGIN CERTIFICATE-----\nMIIBdemoProxyCAnotARealCertificate\n-----END CERTIFICATE-----\n")

func proxy(now time.Time) *configv1.Proxy {
	p := &configv1.Proxy{ObjectMeta: meta(config.ClusterSingletonName, "", 30*24*time.Hour, now)}
	p.Spec = configv1.ProxySpec{HTTPProxy: demoProxy, HTTPSProxy: demoProxy, NoProxy: "api-int.demo.example.com",
		TrustedCA: configv1.ConfigMapNameReference{Name: demoCAName}}
	p.Status = configv1.ProxyStatus{HTTPProxy: demoProxy, HTTPSProxy: demoProxy, NoProxy: demoNoProxy}
	return p
}

func trustedCA(now time.Time) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: meta(demoCAName, config.OpenShiftConfigNS, 30*24*time.Hour, now),
		Data: map[string]string{config.TrustedCAKey: string(demoCA)}}
}

// seedFleetConfig writes what WMCO would have left on a configured host, with the demo's drift.
func seedFleetConfig(h *windows.Host, ip string, now time.Time) {
	idms, itms := mirrorSets(now)
	tree, err := registries.Render(registries.Input{DigestMirrorSets: []configv1.ImageDigestMirrorSet{*idms},
		TagMirrorSets: []configv1.ImageTagMirrorSet{*itms}, PullSecret: pullSecretJSON()})
	if err == nil {
		for _, f := range tree.Files {
			if ip == staleMirrorIP && f.Source == "registry.redhat.io" {
				continue // configured before the release-tags mirror set existed
			}
			_ = h.WriteFile(config.RegistriesDir+`\`+f.Path(), f.Content)
		}
	}
	if ip == staleMirrorIP {
		_ = h.WriteFile(config.RegistriesDir+`\quay.io\hosts.toml`, []byte("server = \"https://quay.io/v2\"\r\n"))
	}
	h.SetEnv("HTTP_PROXY", demoProxy)
	h.SetEnv("HTTPS_PROXY", demoProxy)
	ca := demoCA
	if ip == staleProxyIP {
		ca = []byte("-----BEGIN CERTIFICATE-----\nMIIBanOlderDemoCA\n-----END CERTIFICATE-----\n")
	} else {
		h.SetEnv("NO_PROXY", demoNoProxy)
	}
	_ = h.WriteFile(config.CABundlePath, ca)
}
