// Package operator plays the installed WMCO's part for tests and the demo. Its secret controller: once
// the operator is installed (its CSV Succeeded, as cluster.OLM reads it) and cloud-private-key holds a
// usable key, it keeps openshift-machine-api/windows-user-data in step with that key (created when
// missing, rewritten when the key changed), so Windows Machines boot with the key authorized
// (sim/machineapi reads it). Its node controllers (NodeOptions, nodes.go): provisioned Windows Machines
// and windows-instances hosts are configured over SSH with that key into Ready, annotated nodes. Without an
// installed operator or with no usable key it writes nothing, as WMCO does.
package operator

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"golang.org/x/crypto/ssh"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/cluster/userdata"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/remote/sshkey"
)

// Operator is the WMCO stand-in.
type Operator struct {
	Clients  cluster.Clients
	Platform string // "AWS", "GCP", ...: the user data is rendered for it (cluster/userdata)
	// Nodes, when set, turns on the node controllers (nil: the secret controller alone).
	Nodes *NodeOptions
	// OnError, when set, is told about each failed reconcile pass (tests log them).
	OnError func(error)

	nodes nodeControllers
}

// Run reconciles every interval until ctx ends, then waits for the configurations it started to stop.
func (o *Operator) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	defer o.nodes.wg.Wait()
	for {
		if err := o.Reconcile(ctx); err != nil && o.OnError != nil && ctx.Err() == nil {
			o.OnError(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Reconcile makes one pass of the operator's controllers; configurations it starts run on after it returns.
func (o *Operator) Reconcile(ctx context.Context) error {
	st, err := cluster.NewOLM(o.Clients).State(ctx)
	if err != nil || !st.Installed() {
		return nil // no operator, nothing runs
	}
	kube := o.Clients.Kube
	key, err := kube.CoreV1().Secrets(config.OperatorNamespace).Get(ctx, config.PrivateKeySecret, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("operatorsim: read %s: %w", config.PrivateKeySecret, err)
	}
	keyPEM := key.Data[config.PrivateKeySecretKey]
	signer, err := sshkey.Parse(keyPEM, nil)
	if err != nil {
		return nil // WMCO reports an unusable key in its log and writes no user data
	}
	if err := o.syncUserData(ctx, signer); err != nil {
		return err
	}
	if o.Nodes == nil {
		return nil
	}
	return o.reconcileNodes(ctx, keyPEM, st.CSV.Spec.Version.String())
}

func (o *Operator) syncUserData(ctx context.Context, signer ssh.Signer) error {
	kube := o.Clients.Kube
	want := userdata.ForKey(signer.PublicKey(), o.Platform)
	secrets := kube.CoreV1().Secrets(config.MachineAPINamespace)
	have, err := secrets.Get(ctx, config.UserDataSecret, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: config.UserDataSecret, Namespace: config.MachineAPINamespace},
			Data: map[string][]byte{config.UserDataSecretKey: want}}
		if _, err := secrets.Create(ctx, s, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("operatorsim: create %s: %w", config.UserDataSecret, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("operatorsim: read %s: %w", config.UserDataSecret, err)
	}
	if string(have.Data[config.UserDataSecretKey]) == string(want) {
		return nil
	}
	have.Data = map[string][]byte{config.UserDataSecretKey: want}
	if _, err := secrets.Update(ctx, have, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("operatorsim: update %s: %w", config.UserDataSecret, err)
	}
	return nil
}
