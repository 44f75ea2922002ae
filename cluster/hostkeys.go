package cluster

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"sync"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/wmcon/wmcon/config"
)

// LocalKeyStore is where pins go when the cluster cannot take them (remote.KnownHostsStore fits).
type LocalKeyStore interface {
	Lookup(ctx context.Context, host string) (ssh.PublicKey, bool, error)
	Pin(ctx context.Context, host string, key ssh.PublicKey) error
	Forget(ctx context.Context, host string) error
}

// HostKeyStore pins Windows hosts' SSH keys where WMCO does: on the Node (annotations ssh-host-key, base64 of
// the key's wire form, and ssh-host-key-type), or, for an address with no Node yet, in the
// windows-ssh-host-keys ConfigMap. When RBAC forbids reading or writing those, it uses the local store, so a
// user without write access still gets trust-on-first-use rather than no checking at all.
type HostKeyStore struct {
	Kube  kubernetes.Interface
	Local LocalKeyStore
	// NodeFor names the node that has an address (from the current snapshot).
	NodeFor func(addr string) (string, bool)
	// NodeAnnotations are a node's annotations as the watcher's cache holds them (false: not cached). A pin
	// found there is used without asking the API server: a console reaching every Windows host of a large
	// fleet (the Mirrors pane's read) would otherwise send one GET per node. A node cached without a pin is
	// read from the server, so a first use is never decided on a stale copy.
	NodeAnnotations func(node string) (map[string]string, bool)
	// ReadOnly keeps first-use keys in memory for this session only (wmcon writes nothing under
	// --read-only, not even a pin) and tells Told about each.
	ReadOnly bool
	Told     func(host, fingerprint string)

	mu      sync.Mutex
	session map[string]ssh.PublicKey // read-only pins, by address
}

// Lookup returns the pinned key of host ("ip:port"), checking the Node, the ConfigMap, then the local store.
func (s *HostKeyStore) Lookup(ctx context.Context, host string) (ssh.PublicKey, bool, error) {
	addr := hostOnly(host)
	s.mu.Lock()
	key, ok := s.session[host]
	s.mu.Unlock()
	if ok {
		return key, true, nil
	}
	if node, ok := s.nodeFor(addr); ok {
		if v := s.cachedPin(node); v != "" {
			key, err := parseWireKey(v)
			return key, err == nil, err
		}
		n, err := s.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err == nil {
			if v := n.Annotations[config.HostKeyAnnotation]; v != "" {
				key, err := parseWireKey(v)
				return key, err == nil, err
			}
		} else if !apierrors.IsForbidden(err) && !apierrors.IsNotFound(err) {
			return nil, false, fmt.Errorf("read host key of node %s: %w", node, err)
		}
	}
	cm, err := s.Kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(ctx, config.HostKeysConfigMap, metav1.GetOptions{})
	if err == nil && cm.Data[addr] != "" {
		key, err := parseWireKey(cm.Data[addr])
		return key, err == nil, err
	}
	return s.Local.Lookup(ctx, host)
}

// Pin records key for host on its Node, else in the ConfigMap, else locally.
func (s *HostKeyStore) Pin(ctx context.Context, host string, key ssh.PublicKey) error {
	if s.ReadOnly {
		s.mu.Lock()
		if s.session == nil {
			s.session = map[string]ssh.PublicKey{}
		}
		s.session[host] = key
		s.mu.Unlock()
		if s.Told != nil {
			s.Told(host, ssh.FingerprintSHA256(key))
		}
		return nil
	}
	addr := hostOnly(host)
	wire := base64.StdEncoding.EncodeToString(key.Marshal())
	if node, ok := s.nodeFor(addr); ok {
		err := s.annotate(ctx, node, map[string]any{config.HostKeyAnnotation: wire, config.HostKeyTypeAnnotation: key.Type()})
		if err == nil || !apierrors.IsForbidden(err) {
			return err
		}
		return s.Local.Pin(ctx, host, key)
	}
	err := s.setConfigMapEntry(ctx, addr, &wire)
	if apierrors.IsForbidden(err) {
		return s.Local.Pin(ctx, host, key)
	}
	return err
}

// Forget removes the pin of a node (by name) everywhere wmcon may have put it, so the next connection
// trusts the host's key anew. It is the deliberate re-pin after a host was reinstalled.
func (s *HostKeyStore) Forget(ctx context.Context, node, host string) error {
	if s.ReadOnly {
		return &ReadOnlyError{Verb: "forget", Resource: "the host key of " + node}
	}
	if node != "" {
		err := s.annotate(ctx, node, map[string]any{config.HostKeyAnnotation: nil, config.HostKeyTypeAnnotation: nil})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("remove the host key annotations of node %s: %w", node, err)
		}
	}
	if err := s.setConfigMapEntry(ctx, hostOnly(host), nil); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
		return err
	}
	return s.Local.Forget(ctx, host)
}

// Pinned reports whether a pin of node (by name) or host exists anywhere Forget would remove one, so that
// forgetting a host that was never pinned can say so. A local store that cannot be read counts as no pin
// there: Forget reports that store's own errors.
func (s *HostKeyStore) Pinned(ctx context.Context, node, host string) (bool, error) {
	s.mu.Lock()
	_, inSession := s.session[host]
	s.mu.Unlock()
	if inSession {
		return true, nil
	}
	if node != "" {
		n, err := s.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		switch {
		case err == nil && (n.Annotations[config.HostKeyAnnotation] != "" || n.Annotations[config.HostKeyTypeAnnotation] != ""):
			return true, nil
		case err != nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err):
			return false, fmt.Errorf("read host key of node %s: %w", node, err)
		}
	}
	cm, err := s.Kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(ctx, config.HostKeysConfigMap, metav1.GetOptions{})
	switch {
	case err == nil && cm.Data[hostOnly(host)] != "":
		return true, nil
	case err != nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err):
		return false, fmt.Errorf("read the %s ConfigMap: %w", config.HostKeysConfigMap, err)
	}
	_, found, err := s.Local.Lookup(ctx, host)
	return found && err == nil, nil
}

// cachedPin is the node's ssh-host-key annotation in the watcher's cache, "" when none is cached.
func (s *HostKeyStore) cachedPin(node string) string {
	if s.NodeAnnotations == nil {
		return ""
	}
	a, ok := s.NodeAnnotations(node)
	if !ok {
		return ""
	}
	return a[config.HostKeyAnnotation]
}

func (s *HostKeyStore) nodeFor(addr string) (string, bool) {
	if s.NodeFor == nil {
		return "", false
	}
	return s.NodeFor(addr)
}

func (s *HostKeyStore) annotate(ctx context.Context, node string, annotations map[string]any) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	_, err := s.Kube.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// setConfigMapEntry sets (value != nil) or removes the entry of addr in windows-ssh-host-keys, creating the
// ConfigMap with WMCO's managed-by label when it does not exist. Hosts are pinned concurrently (byoh
// validate --ssh, a fleet's first connections): a lost race (the ConfigMap created, or changed, by another
// pin) reads it again and retries.
func (s *HostKeyStore) setConfigMapEntry(ctx context.Context, addr string, value *string) error {
	raced := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }
	return retry.OnError(retry.DefaultRetry, raced, func() error { return s.setConfigMapEntryOnce(ctx, addr, value) })
}

func (s *HostKeyStore) setConfigMapEntryOnce(ctx context.Context, addr string, value *string) error {
	cms := s.Kube.CoreV1().ConfigMaps(config.OperatorNamespace)
	// A merge patch of the one entry: concurrent pins of other hosts never conflict with it.
	entry := map[string]any{addr: nil}
	if value != nil {
		entry[addr] = *value
	}
	patch, _ := json.Marshal(map[string]any{"data": entry})
	_, err := cms.Patch(ctx, config.HostKeysConfigMap, types.MergePatchType, patch, metav1.PatchOptions{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	if value == nil {
		return nil
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: config.HostKeysConfigMap, Namespace: config.OperatorNamespace,
		Labels: map[string]string{config.HostKeysManagedByLabel: config.OperatorName}}, Data: map[string]string{addr: *value}}
	_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
	return err // AlreadyExists: another pin created it first; the caller patches it again
}

func parseWireKey(b64 string) (ssh.PublicKey, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("pinned host key is not base64: %w", err)
	}
	key, err := ssh.ParsePublicKey(raw)
	if err != nil {
		return nil, fmt.Errorf("pinned host key cannot be parsed: %w", err)
	}
	return key, nil
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}
