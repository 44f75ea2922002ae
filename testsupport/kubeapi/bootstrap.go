package kubeapi

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The node bootstrap credentials as OpenShift has them: the machine-config operator's namespace holds a
// service account node-bootstrapper whose token secret is what WMCO writes into a Windows host's bootstrap
// kubeconfig. The server seeds them at start (see seedNodeBootstrapper).
const (
	NodeBootstrapperNamespace = "openshift-machine-config-operator"
	NodeBootstrapperAccount   = "node-bootstrapper"
	NodeBootstrapperSecret    = "node-bootstrapper-token"
	// NodeBootstrapperUser is the user name the API server gives requests made with that token (the
	// requester of the kubelet's client CSR).
	NodeBootstrapperUser = "system:serviceaccount:" + NodeBootstrapperNamespace + ":" + NodeBootstrapperAccount
)

// bootstrapTokenLifetime outlives any test run; the token is also bound to its secret, so deleting the
// secret revokes it, as deleting a legacy token secret does.
const bootstrapTokenLifetime = 48 * time.Hour

// BootstrapToken is the node-bootstrapper service account's token, as stored in the secret
// openshift-machine-config-operator/node-bootstrapper-token (key "token").
func (s *Server) BootstrapToken() string { return s.bootstrapToken }

// CACert is the cluster CA in PEM form: it signed the API server's serving certificate, and the
// kube-controller-manager (WithControllerManager) signs kubelet certificates with it, so it is both the
// bootstrap CA and the kubelet client CA a Windows host needs.
func (s *Server) CACert() []byte { return append([]byte(nil), s.ca.certPEM...) }

// seedNodeBootstrapper creates the namespace, service account, RBAC and token secret OpenShift has for node
// bootstrap, plus the binding kubeadm makes for bootstrap tokens (group system:bootstrappers), so both
// kinds of bootstrap credential can post node client CSRs and nothing more.
func (s *Server) seedNodeBootstrapper(ctx context.Context) error {
	client, err := kubernetes.NewForConfig(s.admin)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: NodeBootstrapperNamespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", NodeBootstrapperNamespace, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: NodeBootstrapperAccount, Namespace: NodeBootstrapperNamespace}}
	if _, err := client.CoreV1().ServiceAccounts(NodeBootstrapperNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service account %s: %w", NodeBootstrapperAccount, err)
	}
	if err := createBindings(ctx, client); err != nil {
		return err
	}
	token, err := s.issueBootstrapToken(ctx, client)
	if err != nil {
		return err
	}
	s.bootstrapToken = token
	return nil
}

// createBindings grants what OpenShift's machine-config operator and kubeadm grant: the built-in
// system:node-bootstrapper role (create and read CSRs) to the bootstrap identities, and certificate
// renewal to nodes.
func createBindings(ctx context.Context, client kubernetes.Interface) error {
	bindings := []rbacv1.ClusterRoleBinding{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "system-bootstrap-node-bootstrapper"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-bootstrapper"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: NodeBootstrapperAccount,
				Namespace: NodeBootstrapperNamespace}},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "kubelet-bootstrap-tokens"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-bootstrapper"},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:bootstrappers"}},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "system-bootstrap-node-renewal"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole",
				Name: "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:nodes"}},
		},
	}
	for i := range bindings {
		_, err := client.RbacV1().ClusterRoleBindings().Create(ctx, &bindings[i], metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create clusterrolebinding %s: %w", bindings[i].Name, err)
		}
	}
	return nil
}

// issueBootstrapToken creates the token secret and fills it. On OpenShift the service-account token
// controller fills a kubernetes.io/service-account-token secret; here the API server itself issues the token
// (TokenRequest), bound to the secret so that it stops working when the secret is deleted, and the secret
// gets the keys the controller would write (token, ca.crt, namespace).
func (s *Server) issueBootstrapToken(ctx context.Context, client kubernetes.Interface) (string, error) {
	secrets := client.CoreV1().Secrets(NodeBootstrapperNamespace)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: NodeBootstrapperSecret, Namespace: NodeBootstrapperNamespace,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: NodeBootstrapperAccount}},
		Type: corev1.SecretTypeServiceAccountToken,
	}
	created, err := secrets.Create(ctx, secret, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("create secret %s/%s: %w", NodeBootstrapperNamespace, NodeBootstrapperSecret, err)
	}
	seconds := int64(bootstrapTokenLifetime / time.Second)
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &seconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: created.Name, UID: created.UID},
	}}
	tr, err := client.CoreV1().ServiceAccounts(NodeBootstrapperNamespace).CreateToken(ctx, NodeBootstrapperAccount, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("issue token for %s: %w", NodeBootstrapperUser, err)
	}
	created.Data = map[string][]byte{
		corev1.ServiceAccountTokenKey:     []byte(tr.Status.Token),
		corev1.ServiceAccountRootCAKey:    s.ca.certPEM,
		corev1.ServiceAccountNamespaceKey: []byte(NodeBootstrapperNamespace),
	}
	if _, err := secrets.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		return "", fmt.Errorf("store token in secret %s/%s: %w", NodeBootstrapperNamespace, NodeBootstrapperSecret, err)
	}
	return tr.Status.Token, nil
}
