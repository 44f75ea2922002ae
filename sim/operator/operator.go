// Package operator plays the installed WMCO's part for tests and the demo. Once the operator is installed (its
// CSV Succeeded, as cluster.OLM reads it) and cloud-private-key holds a usable key, it publishes its node
// contract, the ConfigMap windows-services-<version> (as WMCO does when it starts), and its secret controller
// keeps openshift-machine-api/windows-user-data in step with that key (created when missing, rewritten when
// the key changed), so Windows Machines boot with the key authorized (sim/machineapi reads it). Its node controllers (NodeOptions, nodes.go): provisioned Windows Machines
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
	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/nodeconfig/contract"
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
	version := st.CSV.Spec.Version.String()
	if err := o.publishContract(ctx, version); err != nil {
		return err
	}
	if o.Nodes == nil {
		return nil
	}
	return o.reconcileNodes(ctx, keyPEM, version)
}

// publishContract writes the node contract as WMCO does when it starts: the immutable ConfigMap
// windows-services-<version> in its namespace, generated for the cluster (wmcon's generator, which gives
// WMCO 11's ConfigMaps for the same inputs). One that exists is left as it is.
func (o *Operator) publishContract(ctx context.Context, version string) error {
	name := contract.ConfigMapName(version)
	cms := o.Clients.Kube.CoreV1().ConfigMaps(config.OperatorNamespace)
	if _, err := cms.Get(ctx, name, metav1.GetOptions{}); err == nil {
		return nil
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("operatorsim: read %s: %w", name, err)
	}
	nf, err := cluster.NewOps(o.Clients).ReadNodeFacts(ctx, cluster.NodeFactsOptions{DryRun: true, Version: version})
	if err != nil {
		return fmt.Errorf("operatorsim: the cluster's facts for %s: %w", name, err)
	}
	in := nf.Facts.ContractInputs()
	if in.Platform == "" {
		in.Platform = o.Platform
	}
	d, err := nodeconfig.Contract(in)
	if err != nil {
		return fmt.Errorf("operatorsim: generate %s: %w", name, err)
	}
	data, err := contract.Render(d)
	if err != nil {
		return err
	}
	immutable := true
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: config.OperatorNamespace}, Data: data, Immutable: &immutable}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("operatorsim: create %s: %w", name, err)
	}
	return nil
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
