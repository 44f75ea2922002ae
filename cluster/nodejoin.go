package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wmcon/wmcon/config"
)

// NodeMeta is what wmcon puts on a Node it configured.
type NodeMeta struct {
	Labels      map[string]string
	Annotations map[string]string
}

// NodeExists reports whether a Node of that name exists.
func (o *Ops) NodeExists(ctx context.Context, name string) (bool, error) {
	_, err := o.getNode(ctx, name)
	if err == nil {
		return true, nil
	}
	if _, ok := err.(*NodeNotFoundError); ok {
		return false, nil
	}
	return false, err
}

// ApplyNodeMeta merges labels and annotations into a Node; it reports whether anything changed.
func (o *Ops) ApplyNodeMeta(ctx context.Context, name string, m NodeMeta) (bool, error) {
	n, err := o.getNode(ctx, name)
	if err != nil {
		return false, err
	}
	labels, annotations := map[string]any{}, map[string]any{}
	for k, v := range m.Labels {
		if cur, ok := n.Labels[k]; !ok || cur != v {
			labels[k] = v
		}
	}
	for k, v := range m.Annotations {
		if cur, ok := n.Annotations[k]; !ok || cur != v {
			annotations[k] = v
		}
	}
	if len(labels)+len(annotations) == 0 {
		return false, nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels, "annotations": annotations}})
	if _, err := o.c.Kube.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return false, fmt.Errorf("label and annotate node %s: %w", name, err)
	}
	return true, nil
}

// PinnedHostKey returns the pin of addr in windows-ssh-host-keys as Node annotations (base64 wire form
// and type), so a configured Node carries its host key as WMCO's do; nil when there is none.
func (o *Ops) PinnedHostKey(ctx context.Context, addr string) (map[string]string, error) {
	cm, err := o.c.Kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(ctx, config.HostKeysConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", config.HostKeysConfigMap, err)
	}
	wire := cm.Data[addr]
	if wire == "" {
		return nil, nil
	}
	key, err := parseWireKey(wire)
	if err != nil {
		return nil, err
	}
	return map[string]string{config.HostKeyAnnotation: wire, config.HostKeyTypeAnnotation: key.Type()}, nil
}

// DeleteNode deletes a Node; a missing one is fine. It reports whether it deleted one.
func (o *Ops) DeleteNode(ctx context.Context, name string) (bool, error) {
	err := o.c.Kube.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("delete node %s: %w", name, err)
	}
	return true, nil
}

// WindowsMachineAt is the name of the Windows Machine whose addresses include addr, "" when there is none
// (no Machine API, or a host that is no Machine's). WMCO names such a host's computer after its Machine on
// vSphere and Nutanix.
func (o *Ops) WindowsMachineAt(ctx context.Context, addr string) (string, error) {
	if o.c.Machine == nil || addr == "" {
		return "", nil
	}
	ms, err := o.c.Machine.MachineV1beta1().Machines(config.MachineAPINamespace).List(ctx, metav1.ListOptions{
		LabelSelector: config.MachineOSIDLabel + "=" + config.WindowsOSID})
	if apierrors.IsNotFound(err) || isNoAPI(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("list Windows Machines: %w", err)
	}
	for _, m := range ms.Items {
		for _, a := range m.Status.Addresses {
			if strings.EqualFold(a.Address, addr) {
				return m.Name, nil
			}
		}
	}
	return "", nil
}

// WMCOOwner says whether the Windows Machine Config Operator manages the host at addr (or named node):
// a Machine labelled with the Windows os-id that has the address or the node, or, with WMCO installed,
// an entry in windows-instances. The sentence names what owns it; "" when WMCO does not.
func (o *Ops) WMCOOwner(ctx context.Context, addr, node string) (string, error) {
	if o.c.Machine != nil {
		ms, err := o.c.Machine.MachineV1beta1().Machines(config.MachineAPINamespace).List(ctx, metav1.ListOptions{
			LabelSelector: config.MachineOSIDLabel + "=" + config.WindowsOSID})
		if err != nil && !apierrors.IsNotFound(err) && !isNoAPI(err) && !apierrors.IsForbidden(err) {
			return "", fmt.Errorf("list Windows Machines: %w", err)
		}
		if err == nil {
			for _, m := range ms.Items {
				if m.Labels[config.IgnoreLabel] == "true" {
					continue
				}
				if m.Status.NodeRef != nil && node != "" && m.Status.NodeRef.Name == node {
					return "Machine " + m.Namespace + "/" + m.Name, nil
				}
				for _, a := range m.Status.Addresses {
					if addr != "" && strings.EqualFold(a.Address, addr) {
						return "Machine " + m.Namespace + "/" + m.Name, nil
					}
				}
			}
		}
	}
	installed, err := o.wmcoInstalled(ctx)
	if err != nil || !installed {
		return "", err
	}
	cm, err := o.c.Kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(ctx, config.BYOHConfigMap, metav1.GetOptions{})
	if err == nil {
		for a := range cm.Data {
			if addr != "" && strings.EqualFold(a, addr) {
				return "the " + config.BYOHConfigMap + " entry " + a, nil
			}
		}
	}
	return "", nil
}

func (o *Ops) wmcoInstalled(ctx context.Context) (bool, error) {
	if o.c.Dynamic == nil {
		return false, nil
	}
	l, err := o.c.Dynamic.Resource(CSVResource).Namespace(config.OperatorNamespace).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) || isNoAPI(err) || apierrors.IsForbidden(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("list the operator's ClusterServiceVersions: %w", err)
	}
	for _, csv := range l.Items {
		if strings.HasPrefix(csv.GetName(), config.OperatorName) {
			return true, nil
		}
	}
	return false, nil
}

// OperatorImage is the image of the installed WMCO operator (its CSV's Deployment), whose /payload holds
// what a Windows node runs; "" when WMCO is not installed.
func (o *Ops) OperatorImage(ctx context.Context) (string, error) {
	if o.c.Dynamic == nil {
		return "", nil
	}
	l, err := o.c.Dynamic.Resource(CSVResource).Namespace(config.OperatorNamespace).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) || isNoAPI(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("list the operator's ClusterServiceVersions: %w", err)
	}
	for _, csv := range l.Items {
		deps, _, _ := unstructured.NestedSlice(csv.Object, "spec", "install", "spec", "deployments")
		for _, d := range deps {
			containers, _, _ := unstructured.NestedSlice(asMap(d), "spec", "template", "spec", "containers")
			for _, c := range containers {
				if img, _ := asMap(c)["image"].(string); img != "" {
					return img, nil
				}
			}
		}
	}
	return "", nil
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// PullSecret is the cluster's pull secret (.dockerconfigjson); nil when absent or unreadable.
func (o *Ops) PullSecret(ctx context.Context) []byte {
	s, err := o.c.Kube.CoreV1().Secrets(config.OpenShiftConfigNS).Get(ctx, config.PullSecret, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return s.Data[config.PullSecretKey]
}

// SetUpgrading puts WMCO's upgrading label on the node (on) or removes it: it marks a node taken out of
// service for an upgrade, so a resumed upgrade knows the cordon is its own.
func (o *Ops) SetUpgrading(ctx context.Context, name string, on bool) error {
	var v any // nil removes the label in a merge patch
	if on {
		v = "true"
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{config.UpgradingLabel: v}}})
	if _, err := o.c.Kube.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("label node %s upgrading=%t: %w", name, on, err)
	}
	return nil
}
