package setup

import (
	"context"
	"errors"
	"fmt"
	"strings"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"golang.org/x/crypto/ssh"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/remote/sshkey"
)

// InstallKey validates a private key, shows what replacing the current one does and asks, then writes
// cloud-private-key. With WMCO installed the operator writes windows-user-data from it; standalone (no
// operator) wmcon writes the user data itself, so new Machines authorize the same key. The key is never
// printed: events name it by type and fingerprint.
func InstallKey(ctx context.Context, keys actions.KeyOps, olm actions.OperatorOLM, pemBytes []byte, sink event.Sink) error {
	return installKey(ctx, keys, olm, pemBytes, nil, sink)
}

// GenerateAndInstallKey generates a key pair of kind ("ed25519" or "rsa") and installs it as InstallKey
// does. The pair is written to out (0600) and out.pub only when every check has passed — the files are
// free, the cluster answers, a different key in the secret may be replaced — and just before the secret
// is: a change that is refused leaves no key files behind. (The audit log's check comes first, from the
// caller's Audited.)
func GenerateAndInstallKey(ctx context.Context, keys actions.KeyOps, olm actions.OperatorOLM, kind, out string, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: "key-create", Target: config.PrivateKeySecret}
	if err := cluster.KeyPairFree(out); err != nil {
		return r.Fail("generate", err, "choose another path")
	}
	pemBytes, pub, err := cluster.GenerateKey(kind)
	if err != nil {
		return r.Fail("generate", err, "")
	}
	return installKey(ctx, keys, olm, pemBytes, func() error {
		r.Started("key-file", "writing the new key pair to "+out+" and "+out+".pub")
		if err := cluster.WriteKeyPair(out, pemBytes, pub); err != nil {
			return r.Fail("key-file", err, "nothing was changed in the cluster; choose another path")
		}
		r.Done("key-file", "wrote "+out+" (0600) and "+out+".pub")
		return nil
	}, sink)
}

// installKey is InstallKey; save, when set, runs after every check and before the first write.
func installKey(ctx context.Context, keys actions.KeyOps, olm actions.OperatorOLM, pemBytes []byte, save func() error, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: "key-create", Target: config.PrivateKeySecret}
	r.Started("validate", "checking the key")
	info, pub, err := cluster.ValidatePrivateKey(pemBytes)
	if err != nil {
		return r.Fail("validate", err, "")
	}
	r.Done("validate", fmt.Sprintf("%s %d bits %s", info.Type, info.Bits, info.Fingerprint))
	st, err := keys.State(ctx)
	if err != nil {
		return r.Fail("state", err, "")
	}
	op, err := olm.State(ctx)
	if err != nil {
		return r.Fail("state", err, "")
	}
	standalone := !op.Installed()
	if st.Key != nil && st.Key.Fingerprint == info.Fingerprint {
		if standalone {
			if err := writeUserData(ctx, keys, r, pub); err != nil {
				return err
			}
		}
		r.Finish(event.Succeeded, "cloud-private-key already holds this key; nothing else changed", "")
		return nil
	}
	if st.Key != nil && st.Key.Fingerprint != info.Fingerprint {
		if ok, err := confirmReplace(ctx, keys, r, *st.Key, info, pub, op.Installed()); err != nil || !ok {
			return err
		}
	}
	if save != nil {
		if err := save(); err != nil {
			return err
		}
	}
	r.Started("secret", "writing "+config.OperatorNamespace+"/"+config.PrivateKeySecret)
	replaced, err := keys.ApplyKey(ctx, pemBytes)
	if err != nil {
		return r.Fail("secret", err, "")
	}
	r.Done("secret", map[bool]string{true: "replaced", false: "created"}[replaced]+" "+config.PrivateKeySecret)
	if !standalone {
		r.Finish(event.Succeeded, "key installed; WMCO regenerates "+config.UserDataSecret+" from it", "")
		return nil
	}
	if err := writeUserData(ctx, keys, r, pub); err != nil {
		return err
	}
	r.Finish(event.Succeeded, "key installed, and "+config.UserDataSecret+" authorizes it (standalone: WMCO is not installed)", "")
	return nil
}

// writeUserData is the standalone step that keeps windows-user-data in step with the key.
func writeUserData(ctx context.Context, keys actions.KeyOps, r event.Reporter, pub ssh.PublicKey) error {
	const step = "user-data"
	secret := config.MachineAPINamespace + "/" + config.UserDataSecret
	r.Started(step, "writing "+secret+" for this key (WMCO is not installed to write it)")
	did, err := keys.ApplyUserData(ctx, pub)
	if err != nil {
		return r.Fail(step, err, "the key is in "+config.PrivateKeySecret+"; run the same command again to write the user data")
	}
	if did == cluster.UserDataUnchanged {
		r.Done(step, secret+" already authorizes this key")
		return nil
	}
	r.Done(step, string(did)+" "+secret)
	return nil
}

func confirmReplace(ctx context.Context, keys actions.KeyOps, r event.Reporter, old, now sshkey.Info, pub ssh.PublicKey, wmco bool) (bool, error) {
	change, err := keys.Consequences(ctx, pub)
	if err != nil {
		return false, r.Fail("consequences", err, "")
	}
	detail := []string{"current key: " + old.Type + " " + old.Fingerprint, "new key: " + now.Type + " " + now.Fingerprint}
	if wmco && len(change.Recreated) > 0 {
		detail = append(detail, "WMCO will delete and recreate these Machine-backed Windows nodes: "+strings.Join(change.Recreated, ", "))
	}
	if wmco && len(change.BYOH) > 0 {
		detail = append(detail, "WMCO will reconfigure these BYOH nodes with the new key: "+strings.Join(change.BYOH, ", "))
	}
	if !wmco {
		detail = append(detail, "WMCO is not installed: wmcon rewrites "+config.MachineAPINamespace+"/"+config.UserDataSecret+
			" so new Windows Machines authorize the new key; existing hosts keep authorising the old key until reconfigured")
	}
	ans, err := r.Ask(ctx, event.Question{Title: "Replace cloud-private-key?", Detail: detail,
		Choices: []event.Choice{{Key: event.ChoiceCancel, Label: "keep the current key"},
			{Key: event.ChoiceReplace, Label: "replace it", Confirm: "Replace the key WMCO uses for every Windows node?"}}})
	if err != nil {
		return false, r.Fail("confirm", err, "")
	}
	if ans != event.ChoiceReplace {
		r.Finish(event.Cancelled, "the key was not replaced", "pass --yes to replace it headless")
		return false, errors.New("the key was not replaced (confirm with --yes)")
	}
	return true, nil
}

// AddBYOH adds a host to windows-instances.
func AddBYOH(ctx context.Context, b actions.BYOHEditor, address, user string, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: "byoh-add", Target: address}
	r.Started("configmap", "adding "+address+" (user "+user+") to "+config.BYOHConfigMap)
	if err := b.Add(ctx, address, user); err != nil {
		return r.Fail("configmap", err, "")
	}
	r.Done("configmap", "added")
	r.Finish(event.Succeeded, address+" added: WMCO configures it as a Windows node", "")
	return nil
}

// RemoveBYOH removes a host from windows-instances after confirmation; WMCO then deconfigures it.
func RemoveBYOH(ctx context.Context, b actions.BYOHEditor, address, node string, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: "byoh-remove", Target: address}
	what := "WMCO will drain the host's node, remove its services and files, and delete the Node"
	if node != "" {
		what = "WMCO will drain node " + node + ", remove its services and files, and delete the Node"
	}
	ans, err := r.Ask(ctx, event.Question{Title: "Remove " + address + " from " + config.BYOHConfigMap + "?", Detail: []string{what},
		Choices: []event.Choice{{Key: event.ChoiceCancel, Label: "keep it"}, {Key: event.ChoiceRemove, Label: "remove", Confirm: "Remove " + address + "?"}}})
	if err != nil {
		return r.Fail("confirm", err, "")
	}
	if ans != event.ChoiceRemove {
		r.Finish(event.Cancelled, "nothing changed", "pass --yes to remove it headless")
		return errors.New("not removed (confirm with --yes)")
	}
	r.Started("configmap", "removing "+address)
	if err := b.Remove(ctx, address); err != nil {
		return r.Fail("configmap", err, "")
	}
	r.Done("configmap", "removed")
	r.Finish(event.Succeeded, address+" removed: "+what, "")
	return nil
}

// machineSetPlan is what applying a generated MachineSet does: create it (current nil), or give the
// Windows MachineSet of its name (current) its spec, changing what changes lists.
type machineSetPlan struct {
	current *machinev1beta1.MachineSet
	changes []string
}

// planMachineSet reads what has the generated MachineSet's name. A MachineSet that is not a Windows one
// (the cluster's Linux workers, say) is never replaced: that is an error naming it.
func planMachineSet(ctx context.Context, ops actions.MachineSetOps, ms *machinev1beta1.MachineSet) (machineSetPlan, error) {
	cur, err := ops.Get(ctx, ms.Name)
	if err != nil || cur == nil {
		return machineSetPlan{}, err
	}
	if !cluster.IsWindowsMachineSet(cur) {
		return machineSetPlan{}, fmt.Errorf("MachineSet %s exists and is not a Windows MachineSet (its Machines are not labelled %s: %s; it has %s replicas): "+
			"wmcon replaces only Windows MachineSets; give another --name", cur.Name, config.MachineOSIDLabel, config.WindowsOSID, replicasOf(cur))
	}
	return machineSetPlan{current: cur, changes: cluster.MachineSetChanges(cur, ms)}, nil
}

// question asks before creating ms, or before replacing the Windows MachineSet of its name, showing
// what changes first, then detail (the YAML, in the console).
func (p machineSetPlan) question(ms *machinev1beta1.MachineSet, detail []string) event.Question {
	if p.current == nil {
		return event.Question{Title: fmt.Sprintf("Create MachineSet %s with %d Windows Machines?", ms.Name, *ms.Spec.Replicas), Detail: detail,
			Choices: []event.Choice{{Key: event.ChoiceCancel, Label: "cancel"}, {Key: event.ChoiceApply, Label: "apply"}}}
	}
	lines := append([]string{"MachineSet " + ms.Name + " exists: replacing its spec changes"}, indent(p.changes)...)
	return event.Question{Title: fmt.Sprintf("Replace Windows MachineSet %s (now %s replicas, then %d)?", ms.Name, replicasOf(p.current), *ms.Spec.Replicas),
		Detail: append(lines, detail...),
		Choices: []event.Choice{{Key: event.ChoiceCancel, Label: "keep it"}, {Key: event.ChoiceApply, Label: "replace",
			Confirm: "Replace the spec of " + ms.Name + "? Its Machines follow the new replicas."}}}
}

func replicasOf(ms *machinev1beta1.MachineSet) string {
	if ms.Spec.Replicas == nil {
		return "1"
	}
	return fmt.Sprint(*ms.Spec.Replicas)
}

func indent(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = "  " + l
	}
	return out
}

// applyMachineSet creates a generated MachineSet, or, once the user confirms the difference (replicas,
// image, instance type; headless: --yes), replaces the spec of the Windows MachineSet of the same name.
// A MachineSet of that name that is not a Windows one was refused by its plan.
func applyMachineSet(ctx context.Context, r event.Reporter, ops actions.MachineSetOps, ms *machinev1beta1.MachineSet, plan machineSetPlan) error {
	if plan.current != nil {
		if len(plan.changes) == 0 {
			r.Finish(event.Succeeded, "MachineSet "+ms.Name+" already has this spec: nothing changed", "")
			return nil
		}
		ans, err := r.Ask(ctx, plan.question(ms, nil))
		if err != nil {
			return r.Fail("confirm", err, "")
		}
		if ans != event.ChoiceApply {
			r.Finish(event.Cancelled, "nothing changed", "pass --yes to replace it headless")
			return errors.New("MachineSet " + ms.Name + " not replaced (confirm with --yes)")
		}
	}
	return applyPlannedMachineSet(ctx, r, ops, ms, plan)
}

// applyPlannedMachineSet makes the change plan describes, which the user has confirmed when it replaces.
func applyPlannedMachineSet(ctx context.Context, r event.Reporter, ops actions.MachineSetOps, ms *machinev1beta1.MachineSet, plan machineSetPlan) error {
	if plan.current == nil {
		r.Started("apply", "creating MachineSet "+ms.Name)
		if err := ops.Create(ctx, ms); err != nil {
			return r.Fail("apply", err, "")
		}
		r.Done("apply", "created")
		r.Finish(event.Succeeded, fmt.Sprintf("MachineSet %s created with %d replicas", ms.Name, *ms.Spec.Replicas), "")
		return nil
	}
	r.Started("apply", "replacing the spec of MachineSet "+ms.Name)
	if err := ops.Replace(ctx, plan.current, ms); err != nil {
		return r.Fail("apply", err, "")
	}
	r.Done("apply", "replaced: "+strings.Join(plan.changes, "; "))
	r.Finish(event.Succeeded, fmt.Sprintf("MachineSet %s replaced, now %d replicas", ms.Name, *ms.Spec.Replicas), "")
	return nil
}

// ScaleMachineSet sets a MachineSet's replicas.
func ScaleMachineSet(ctx context.Context, ops actions.MachineSetOps, name string, replicas int32, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: "machineset-scale", Target: name}
	if replicas < 0 {
		return r.Fail("scale", fmt.Errorf("replicas %d: must be 0 or more", replicas), "")
	}
	r.Started("scale", fmt.Sprintf("scaling %s to %d", name, replicas))
	was, err := ops.Scale(ctx, name, replicas)
	if err != nil {
		return r.Fail("scale", err, "")
	}
	r.Done("scale", fmt.Sprintf("%d → %d replicas", was, replicas))
	r.Finish(event.Succeeded, fmt.Sprintf("%s scaled from %d to %d", name, was, replicas), "")
	return nil
}

// DeleteMachineSet deletes a MachineSet after a confirmation naming the nodes that go with it.
func DeleteMachineSet(ctx context.Context, ops actions.MachineSetOps, name string, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: "machineset-delete", Target: name}
	nodes, err := ops.NodesOf(ctx, name)
	if err != nil {
		return r.Fail("nodes", err, "")
	}
	detail := []string{"its Machines are deleted, and with them their nodes: " + listOr(nodes, "none")}
	ans, err := r.Ask(ctx, event.Question{Title: "Delete MachineSet " + name + "?", Detail: detail,
		Choices: []event.Choice{{Key: event.ChoiceCancel, Label: "keep it"}, {Key: event.ChoiceRemove, Label: "delete", Confirm: "Delete " + name + " and its nodes?"}}})
	if err != nil {
		return r.Fail("confirm", err, "")
	}
	if ans != event.ChoiceRemove {
		r.Finish(event.Cancelled, "nothing changed", "pass --yes to delete it headless")
		return errors.New("not deleted (confirm with --yes)")
	}
	r.Started("delete", "deleting MachineSet "+name)
	if err := ops.Delete(ctx, name); err != nil {
		return r.Fail("delete", err, "")
	}
	r.Done("delete", "deleted")
	r.Finish(event.Succeeded, "MachineSet "+name+" deleted; nodes going: "+listOr(nodes, "none"), "")
	return nil
}

func listOr(items []string, none string) string {
	if len(items) == 0 {
		return none
	}
	return strings.Join(items, ", ")
}
