package cluster

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/registries"
)

// MirrorInput reads what the Windows nodes' registry configuration is rendered from: every
// ImageDigestMirrorSet and ImageTagMirrorSet, and the cluster pull secret (absent: no credentials).
func MirrorInput(ctx context.Context, c Clients) (registries.Input, error) {
	var in registries.Input
	idms, err := c.Config.ConfigV1().ImageDigestMirrorSets().List(ctx, metav1.ListOptions{})
	if err != nil {
		return in, fmt.Errorf("list ImageDigestMirrorSets: %w", explainMissingAPI(err))
	}
	itms, err := c.Config.ConfigV1().ImageTagMirrorSets().List(ctx, metav1.ListOptions{})
	if err != nil {
		return in, fmt.Errorf("list ImageTagMirrorSets: %w", explainMissingAPI(err))
	}
	in.DigestMirrorSets, in.TagMirrorSets = idms.Items, itms.Items
	secret, err := c.Kube.CoreV1().Secrets(config.OpenShiftConfigNS).Get(ctx, config.PullSecret, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return in, fmt.Errorf("read secret %s/%s (registry credentials): %w", config.OpenShiftConfigNS, config.PullSecret, err)
	default:
		in.PullSecret = secret.Data[config.PullSecretKey]
	}
	return in, nil
}

// MirrorTree renders the registries tree every Windows node should have from the cluster's mirror sets.
func MirrorTree(ctx context.Context, c Clients) (registries.Tree, error) {
	in, err := MirrorInput(ctx, c)
	if err != nil {
		return registries.Tree{}, err
	}
	tree, err := registries.Render(in)
	if err != nil {
		return tree, fmt.Errorf("the cluster's mirror sets are invalid; fix them first:\n%w", err)
	}
	return tree, nil
}

// ClusterProxy reads proxy/cluster: the effective values from its status (which adds the cluster's own
// networks to noProxy), else its spec, and the trusted CA bundle from the ConfigMap its spec names.
func ClusterProxy(ctx context.Context, c Clients) (model.Proxy, error) {
	p, err := c.Config.ConfigV1().Proxies().Get(ctx, config.ClusterSingletonName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return model.Proxy{}, nil // no cluster proxy: nothing may be set on the nodes
	}
	if err != nil {
		return model.Proxy{}, fmt.Errorf("read proxy/cluster: %w", explainMissingAPI(err))
	}
	out := model.Proxy{HTTP: p.Status.HTTPProxy, HTTPS: p.Status.HTTPSProxy, NoProxy: p.Status.NoProxy}
	if out.HTTP == "" && out.HTTPS == "" && out.NoProxy == "" {
		out = model.Proxy{HTTP: p.Spec.HTTPProxy, HTTPS: p.Spec.HTTPSProxy, NoProxy: p.Spec.NoProxy}
	}
	if err := out.Check(); err != nil {
		return model.Proxy{}, err
	}
	if name := p.Spec.TrustedCA.Name; name != "" {
		cm, err := c.Kube.CoreV1().ConfigMaps(config.OpenShiftConfigNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return model.Proxy{}, fmt.Errorf("read the proxy's trusted CA ConfigMap %s/%s: %w", config.OpenShiftConfigNS, name, err)
		}
		out.TrustedCA, out.TrustedCAName = []byte(cm.Data[config.TrustedCAKey]), name
	}
	return out, nil
}

func explainMissingAPI(err error) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("the config.openshift.io API is not installed: is this an OpenShift/OKD cluster? (%w)", err)
	}
	return err
}
