package triage

import (
	"context"
	"fmt"

	operatorv1 "github.com/openshift/api/operator/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
)

// operatorNetworkResource is network.operator.openshift.io, read through the dynamic client so the demo's
// fake clients (which have no operator clientset) answer too.
var operatorNetworkResource = schema.GroupVersionResource{Group: "operator.openshift.io", Version: "v1", Resource: "networks"}

// ClusterReads is TriageCluster over the cluster's clients.
type ClusterReads struct {
	Clients cluster.Clients
}

var _ TriageCluster = ClusterReads{}

// NodeEvents lists the recent events of a node and its Machine.
func (c ClusterReads) NodeEvents(ctx context.Context, node, machine string, limit int) ([]cluster.EventInfo, error) {
	return cluster.NodeEvents(ctx, c.Clients.Kube, node, machine, limit)
}

// NetworkConfig reads network.config.openshift.io/cluster and network.operator.openshift.io/cluster.
// Absent objects are not errors: the checks say what they could not see.
func (c ClusterReads) NetworkConfig(ctx context.Context) (NetworkConfig, error) {
	var nc NetworkConfig
	netCfg, err := c.Clients.Config.ConfigV1().Networks().Get(ctx, config.ClusterSingletonName, metav1.GetOptions{})
	switch {
	case err == nil:
		nc.Type = netCfg.Spec.NetworkType
		for _, e := range netCfg.Spec.ClusterNetwork {
			nc.ClusterNetworks = append(nc.ClusterNetworks, e.CIDR)
		}
		nc.ServiceNetworks = netCfg.Spec.ServiceNetwork
	case !apierrors.IsNotFound(err):
		return nc, fmt.Errorf("read network.config.openshift.io/cluster: %w", err)
	}
	if c.Clients.Dynamic == nil {
		return nc, nil
	}
	u, err := c.Clients.Dynamic.Resource(operatorNetworkResource).Get(ctx, config.ClusterSingletonName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nc, nil
	case err != nil:
		return nc, fmt.Errorf("read network.operator.openshift.io/cluster: %w", err)
	}
	var op operatorv1.Network
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &op); err != nil {
		return nc, fmt.Errorf("decode network.operator.openshift.io/cluster: %w", err)
	}
	nc.OperatorFound = true
	if ovn := op.Spec.DefaultNetwork.OVNKubernetesConfig; ovn != nil && ovn.HybridOverlayConfig != nil {
		nc.HybridOverlay = true
		for _, e := range ovn.HybridOverlayConfig.HybridClusterNetwork {
			nc.HybridClusterNetworks = append(nc.HybridClusterNetworks, e.CIDR)
		}
		if p := ovn.HybridOverlayConfig.HybridOverlayVXLANPort; p != nil {
			nc.VXLANPort = *p
		}
	}
	return nc, nil
}
