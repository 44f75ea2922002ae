package kubelet

import (
	"fmt"

	kubeletconfig "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/wmcon/wmcon/sim/windows"
)

type kubeletConfig = kubeletconfig.KubeletConfiguration

const (
	kubeletConfigKind       = "KubeletConfiguration"
	kubeletConfigAPIVersion = "kubelet.config.k8s.io/v1beta1"
)

// loadKubeletConfig reads the --config file as the kubelet does: JSON or YAML, kind KubeletConfiguration
// of kubelet.config.k8s.io/v1beta1. Unknown fields are accepted with a warning, as the kubelet's lenient
// decoding does, so a misplaced field (say a top-level clientCAFile) is visible in the log but ignored.
func loadKubeletConfig(p *windows.Process, path string) (*kubeletConfig, error) {
	data, err := p.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to load kubelet config file, path: %s, error: failed to read kubelet config file %q, error: %w",
			path, path, notFound(path))
	}
	var conf kubeletConfig
	if err := yaml.Unmarshal(data, &conf); err != nil {
		return nil, fmt.Errorf("failed to load kubelet config file, path: %s, error: failed to decode: %w", path, err)
	}
	if conf.Kind != kubeletConfigKind || conf.APIVersion != kubeletConfigAPIVersion {
		return nil, fmt.Errorf("failed to load kubelet config file, path: %s, error: no kind %q is registered for version %q",
			path, conf.Kind, conf.APIVersion)
	}
	if err := yaml.UnmarshalStrict(data, &kubeletConfig{}); err != nil {
		p.Log('W', "server.go:212", fmt.Sprintf(`"Kubelet config file contains unknown or duplicate fields" path=%q err=%q`, path, err.Error()))
	}
	return &conf, nil
}
