package cluster

import (
	"context"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/config"
)

// The identity cloud-node-manager runs with (C:\k\wicd-kubeconfig). A node's own credentials may not
// initialize its Node (NodeRestriction refuses the removal of the uninitialized taint), so WMCO gives it its
// node daemon's service account; wmcon uses that one when WMCO is installed and otherwise makes its own, with
// only the rights cloud-node-manager needs.
const (
	// WICDAccount is WMCO's node daemon's service account in the operator's namespace; its long-lived token
	// secret has the same name (WMCO creates it when it configures a node).
	WICDAccount = "windows-instance-config-daemon"

	IdentityNamespace      = "wmcon-system"       // wmcon's own namespace, standalone
	NodeManagerAccount     = "cloud-node-manager" // wmcon's service account for it there
	NodeManagerTokenSecret = "cloud-node-manager-token"
	NodeManagerRole        = "wmcon-cloud-node-manager" // its ClusterRole and ClusterRoleBinding

	managedByLabel = "app.kubernetes.io/managed-by"
	managedByWmcon = "wmcon"
)

// nodeManagerRules are what cloud-node-manager does with its identity: read and update Nodes (providerID,
// labels, the taint), their status (addresses), and post events.
var nodeManagerRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch", "patch", "update"}},
	{APIGroups: []string{""}, Resources: []string{"nodes/status"}, Verbs: []string{"patch", "update"}},
	{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
}

// tokenFillTimeout bounds the wait for the service-account token controller to fill a token secret (WMCO
// waits a minute too).
var tokenFillTimeout = time.Minute

// readWICDCredentials fills Facts.WICDToken and WICDCA when a service of the host's contract runs with
// C:\k\wicd-kubeconfig. With WMCO installed: its node daemon's token secret, created as WMCO creates it when
// missing. Standalone: wmcon's service account in IdentityNamespace, created with its role, binding and token
// secret when missing. A dry run creates nothing: the plan then carries a placeholder.
func (o *Ops) readWICDCredentials(ctx context.Context, nf *NodeFacts, operator, dryRun bool) error {
	if !nf.Facts.NeedsWICDKubeconfig() {
		return nil
	}
	ns, name, account := IdentityNamespace, NodeManagerTokenSecret, NodeManagerAccount
	if operator {
		ns, name, account = config.OperatorNamespace, WICDAccount, WICDAccount
	} else if !dryRun {
		// wmcon's own account, role and binding, brought back to what they must be on every run.
		if err := o.ensureNodeManagerAccount(ctx, nf); err != nil {
			return err
		}
	}
	s, err := o.c.Kube.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil && !operator && s.Labels[managedByLabel] != managedByWmcon:
		return notOursError("secret", ns+"/"+name)
	case err == nil && tokenFilled(s):
		nf.Facts.WICDToken, nf.Facts.WICDCA = string(s.Data[corev1.ServiceAccountTokenKey]), s.Data[corev1.ServiceAccountRootCAKey]
		return nil
	case err != nil && !apierrors.IsNotFound(err):
		return fmt.Errorf("read secret %s/%s: %w", ns, name, err)
	case dryRun:
		nf.Facts.WICDToken, nf.Facts.WICDCA = "placeholder-token", nf.Facts.BootstrapCA
		nf.Notes = append(nf.Notes, fmt.Sprintf("cloud-node-manager's credentials (service account %s/%s) would be created: the plan shows a placeholder", ns, account))
		return nil
	}
	if err != nil { // not found
		if err := o.createTokenSecret(ctx, ns, name, account); err != nil {
			return err
		}
		nf.Notes = append(nf.Notes, fmt.Sprintf("created the token secret %s/%s of service account %s for cloud-node-manager", ns, name, account))
	}
	s, err = o.waitTokenFilled(ctx, ns, name)
	if err != nil {
		return err
	}
	nf.Facts.WICDToken, nf.Facts.WICDCA = string(s.Data[corev1.ServiceAccountTokenKey]), s.Data[corev1.ServiceAccountRootCAKey]
	return nil
}

func tokenFilled(s *corev1.Secret) bool {
	return len(s.Data[corev1.ServiceAccountTokenKey]) > 0 && len(s.Data[corev1.ServiceAccountRootCAKey]) > 0
}

func notOursError(kind, name string) error {
	return fmt.Errorf("%s %s exists and wmcon did not create it (no label %s=%s): wmcon does not replace it; "+
		"delete it if it is a leftover, then run the command again", kind, name, managedByLabel, managedByWmcon)
}

func wmconLabels() map[string]string { return map[string]string{managedByLabel: managedByWmcon} }

// createTokenSecret asks the service-account token controller for a long-lived token of account, as WMCO
// does for its node daemon: a secret of type kubernetes.io/service-account-token naming the account.
func (o *Ops) createTokenSecret(ctx context.Context, ns, name, account string) error {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: wmconLabels(),
			Annotations: map[string]string{corev1.ServiceAccountNameKey: account}},
		Type: corev1.SecretTypeServiceAccountToken,
	}
	if _, err := o.c.Kube.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the token secret %s/%s for service account %s: %w", ns, name, account, err)
	}
	return nil
}

// waitTokenFilled waits until the token controller has written the secret's token and CA.
func (o *Ops) waitTokenFilled(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	wctx, cancel := context.WithTimeout(ctx, tokenFillTimeout)
	defer cancel()
	for {
		s, err := o.c.Kube.CoreV1().Secrets(ns).Get(wctx, name, metav1.GetOptions{})
		if err == nil && tokenFilled(s) {
			return s, nil
		}
		if err != nil && !apierrors.IsNotFound(err) && wctx.Err() == nil {
			return nil, fmt.Errorf("read secret %s/%s: %w", ns, name, err)
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("secret %s/%s has no token after %s: the service-account token controller (kube-controller-manager) fills it; check that it runs", ns, name, tokenFillTimeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ensureNodeManagerAccount creates wmcon's namespace, service account, ClusterRole and ClusterRoleBinding
// for cloud-node-manager where missing, brings wmcon's own back to what they must be, and refuses to touch
// one wmcon did not create.
func (o *Ops) ensureNodeManagerAccount(ctx context.Context, nf *NodeFacts) error {
	kube := o.c.Kube
	if err := o.ensureIdentityNamespace(ctx, nf); err != nil {
		return err
	}
	sa, err := kube.CoreV1().ServiceAccounts(IdentityNamespace).Get(ctx, NodeManagerAccount, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = kube.CoreV1().ServiceAccounts(IdentityNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: NodeManagerAccount, Labels: wmconLabels()}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create service account %s/%s: %w", IdentityNamespace, NodeManagerAccount, err)
		}
	case err != nil:
		return fmt.Errorf("read service account %s/%s: %w", IdentityNamespace, NodeManagerAccount, err)
	case sa.Labels[managedByLabel] != managedByWmcon:
		return notOursError("service account", IdentityNamespace+"/"+NodeManagerAccount)
	}
	if err := o.ensureNodeManagerRole(ctx); err != nil {
		return err
	}
	return o.ensureNodeManagerBinding(ctx)
}

// ensureIdentityNamespace creates wmcon's namespace when missing; one of that name wmcon did not create is
// not used.
func (o *Ops) ensureIdentityNamespace(ctx context.Context, nf *NodeFacts) error {
	kube := o.c.Kube
	ns, err := kube.CoreV1().Namespaces().Get(ctx, IdentityNamespace, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: IdentityNamespace, Labels: wmconLabels()}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s: %w", IdentityNamespace, err)
		}
		nf.Notes = append(nf.Notes, "created namespace "+IdentityNamespace+" for what wmcon keeps in the cluster (cloud-node-manager's service account, windows_exporter's certificate)")
	case err != nil:
		return fmt.Errorf("read namespace %s: %w", IdentityNamespace, err)
	case ns.Labels[managedByLabel] != managedByWmcon:
		return notOursError("namespace", IdentityNamespace)
	}
	return nil
}

func (o *Ops) ensureNodeManagerRole(ctx context.Context) error {
	roles := o.c.Kube.RbacV1().ClusterRoles()
	want := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: NodeManagerRole, Labels: wmconLabels()}, Rules: nodeManagerRules}
	got, err := roles.Get(ctx, NodeManagerRole, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = roles.Create(ctx, want, metav1.CreateOptions{})
	case err != nil:
	case got.Labels[managedByLabel] != managedByWmcon:
		return notOursError("ClusterRole", NodeManagerRole)
	case !reflect.DeepEqual(got.Rules, want.Rules):
		got.Rules = want.Rules
		_, err = roles.Update(ctx, got, metav1.UpdateOptions{})
	}
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("ClusterRole %s: %w", NodeManagerRole, err)
	}
	return nil
}

func (o *Ops) ensureNodeManagerBinding(ctx context.Context) error {
	bindings := o.c.Kube.RbacV1().ClusterRoleBindings()
	want := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: NodeManagerRole, Labels: wmconLabels()},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: NodeManagerRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: NodeManagerAccount, Namespace: IdentityNamespace}}}
	got, err := bindings.Get(ctx, NodeManagerRole, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = bindings.Create(ctx, want, metav1.CreateOptions{})
	case err != nil:
	case got.Labels[managedByLabel] != managedByWmcon:
		return notOursError("ClusterRoleBinding", NodeManagerRole)
	case !reflect.DeepEqual(got.Subjects, want.Subjects) || got.RoleRef != want.RoleRef:
		// The role a binding refers to cannot change: wmcon's own binding is made again.
		if err = bindings.Delete(ctx, NodeManagerRole, metav1.DeleteOptions{}); err == nil {
			_, err = bindings.Create(ctx, want, metav1.CreateOptions{})
		}
	}
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("ClusterRoleBinding %s: %w", NodeManagerRole, err)
	}
	return nil
}
