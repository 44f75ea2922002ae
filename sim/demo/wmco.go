package demo

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/nodeconfig/contract"
	"github.com/wmcon/wmcon/sim/cloudprovider"
	"github.com/wmcon/wmcon/sim/windows"
)

// exporterTLS is the certificate service-ca gave WMCO's metrics Service: the secret
// windows-machine-config-operator-tls, which WMCO writes to every node for windows_exporter.
type exporterTLS struct{ cert, key []byte }

func newExporterTLS() (exporterTLS, error) {
	cert, key, err := windows.SelfSignedCert("windows-exporter."+config.OperatorNamespace+".svc", "")
	if err != nil {
		return exporterTLS{}, fmt.Errorf("the demo's exporter certificate: %w", err)
	}
	return exporterTLS{cert: cert, key: key}, nil
}

// wmcoObjects are what the installed WMCO publishes in its namespace: its node contract (the ConfigMap
// windows-services-<version>, generated for the demo cluster as WMCO generates it) and its TLS secret.
func wmcoObjects(tls exporterTLS, now time.Time) ([]runtime.Object, error) {
	d, err := nodeconfig.Contract(nodeconfig.ContractInputs{Platform: "AWS", APIServerURL: infrastructure(now).Status.APIServerInternalURL})
	if err != nil {
		return nil, err
	}
	data, err := contract.Render(d)
	if err != nil {
		return nil, err
	}
	// WMCO names the ConfigMap after its full build version, which its nodes' version annotations hold; the
	// previous operator's stays while a node still follows it (the demo's node behind on 10.20).
	immutable := true
	var out []runtime.Object
	for _, v := range []struct {
		version string
		age     time.Duration
	}{{currentWMCO, 9 * 24 * time.Hour}, {oldWMCOVersion, 60 * 24 * time.Hour}} {
		out = append(out, &corev1.ConfigMap{ObjectMeta: meta(contract.ConfigMapName(v.version), config.OperatorNamespace, v.age, now),
			Data: data, Immutable: &immutable})
	}
	s := secret(cluster.ExporterTLSSecret, config.OperatorNamespace, cluster.ExporterTLSCert, tls.cert, corev1.SecretTypeTLS, now)
	s.Data[cluster.ExporterTLSKey] = tls.key
	return append(out, s), nil
}

// cloudController is AWS's cloud controller manager's node controller for the demo: a node is initialized
// (its uninitialized taint removed) when its name is an instance's private DNS name (CloudHostname), the
// name WMCO's configuration (and wmcon's) gives it; a node registered under its host's own name stays
// uninitialized.
func (c *Cluster) cloudController() *cloudprovider.NodeController {
	return &cloudprovider.NodeController{Kube: c.kube, Find: func(node string) (cloudprovider.Instance, bool) {
		found := func(h *windows.Host) (cloudprovider.Instance, bool) {
			if strings.EqualFold(h.CloudHostname(), node) {
				return cloudprovider.Instance{Name: node, ProviderID: "aws:///us-east-1a/" + h.InstanceID()}, true
			}
			return cloudprovider.Instance{}, false
		}
		for _, h := range c.Hosts {
			if i, ok := found(h); ok {
				return i, true
			}
		}
		for _, h := range c.bare {
			if i, ok := found(h); ok {
				return i, true
			}
		}
		if c.Machines != nil {
			for _, h := range c.Machines.Hosts() {
				if i, ok := found(h); ok {
					return i, true
				}
			}
		}
		return cloudprovider.Instance{}, false
	}}
}
