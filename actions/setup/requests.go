package setup

import (
	"context"
	"fmt"
	"strings"
	"time"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/cmdline"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
)

func init() {
	actions.Register(runMachineSetGenerate)
	actions.Register(runMachineSetScale)
	actions.Register(runMachineSetDelete)
	actions.Register(runBYOHAdd)
	actions.Register(runBYOHRemove)
}

func runMachineSetScale(ctx context.Context, b actions.Backends, req request.MachineSetScale, sink event.Sink) error {
	s, err := b.SetupActions()
	if err != nil {
		return err
	}
	return ScaleMachineSet(ctx, s.MachineSets, req.Name, req.Replicas, sink)
}

func runMachineSetDelete(ctx context.Context, b actions.Backends, req request.MachineSetDelete, sink event.Sink) error {
	s, err := b.SetupActions()
	if err != nil {
		return err
	}
	return DeleteMachineSet(ctx, s.MachineSets, req.Name, sink)
}

func runBYOHAdd(ctx context.Context, b actions.Backends, req request.BYOHAdd, sink event.Sink) error {
	s, err := b.SetupActions()
	if err != nil {
		return err
	}
	if req.Preview {
		r := event.Reporter{Sink: sink, Action: req.Action(), Target: req.Address}
		plan, err := byohPlan(ctx, req)
		if err != nil {
			return r.Fail("validate", err, "")
		}
		return showPlan(r, plan)
	}
	tryBYOHLogin(ctx, b, req, sink)
	return AddBYOH(ctx, s.BYOH, req.Address, req.User, sink)
}

func runBYOHRemove(ctx context.Context, b actions.Backends, req request.BYOHRemove, sink event.Sink) error {
	s, err := b.SetupActions()
	if err != nil {
		return err
	}
	return RemoveBYOH(ctx, s.BYOH, req.Address, req.Node, sink)
}

// runMachineSetGenerate builds the MachineSet, shows it (YAML) in a question and applies it once confirmed.
// When a Windows MachineSet of that name exists, the preview and the question say "replace" and list what
// changes; one that is not a Windows MachineSet is refused before anything is asked.
func runMachineSetGenerate(ctx context.Context, b actions.Backends, req request.MachineSetGenerate, sink event.Sink) error {
	s, err := b.SetupActions()
	if err != nil {
		return err
	}
	r := event.Reporter{Sink: sink, Action: req.Action(), Target: req.Targets()[0]}
	r.Started("generate", "building the MachineSet from the cluster's settings")
	ms, err := generateMachineSet(ctx, s.MachineSets, req)
	if err != nil {
		return r.Fail("generate", err, "")
	}
	plan, err := planMachineSet(ctx, s.MachineSets, ms)
	if err != nil {
		return r.Fail("generate", err, "")
	}
	r.Done("generate", "MachineSet "+ms.Name)
	if req.Apply {
		return applyMachineSet(ctx, r, s.MachineSets, ms, plan)
	}
	text, err := yaml.Marshal(ms)
	if err != nil {
		return r.Fail("generate", err, "")
	}
	if req.Preview {
		summary := fmt.Sprintf("create MachineSet %s/%s: the machine API creates %d Windows Machines from it, whose user data lets WMCO reach them", ms.Namespace, ms.Name, *ms.Spec.Replicas)
		if plan.current != nil {
			summary = fmt.Sprintf("replace the spec of Windows MachineSet %s/%s: %s", ms.Namespace, ms.Name, orOther(strings.Join(plan.changes, "; "), "no change"))
		}
		return showPlan(r, event.Plan{Title: fmt.Sprintf("MachineSet %s with %d Windows Machines", ms.Name, *ms.Spec.Replicas),
			Summary: []string{summary}, YAML: string(text), Commands: []string{machineSetCommand(req, ms.Name, plan.current != nil)}})
	}
	if plan.current != nil && len(plan.changes) == 0 {
		r.Finish(event.Succeeded, "MachineSet "+ms.Name+" already has this spec: nothing changed", "")
		return nil
	}
	if req.Confirmed {
		return applyPlannedMachineSet(ctx, r, s.MachineSets, ms, plan)
	}
	ans, err := r.Ask(ctx, plan.question(ms, strings.Split(strings.TrimRight(string(text), "\n"), "\n")))
	if err != nil {
		return r.Fail("confirm", err, "")
	}
	if ans != event.ChoiceApply {
		r.Finish(event.Cancelled, "nothing applied", "")
		return nil
	}
	return applyPlannedMachineSet(ctx, r, s.MachineSets, ms, plan)
}

// generateMachineSet builds and validates the MachineSet a request describes.
func generateMachineSet(ctx context.Context, ops actions.MachineSetBackend, req request.MachineSetGenerate) (*machinev1beta1.MachineSet, error) {
	infra, machines, err := ops.Inputs(ctx)
	if err != nil {
		return nil, err
	}
	p := cluster.PlatformOf(infra)
	if req.Platform != "" {
		p = ""
		for _, known := range cluster.MachineSetPlatforms {
			if strings.EqualFold(string(known), req.Platform) {
				p = known
			}
		}
		if p == "" {
			return nil, fmt.Errorf("platform %q: use aws, azure, vsphere, gcp or nutanix", req.Platform)
		}
	}
	mreq := cluster.MachineSetRequest{Platform: p, Name: req.Name, Zone: req.Zone, Image: req.Image, InstanceType: req.InstanceType, Replicas: req.ReplicaCount()}
	ms, err := cluster.GenerateMachineSet(infra, machines, mreq)
	if err != nil {
		return nil, err
	}
	if err := cluster.ValidateMachineSet(p, ms); err != nil {
		return nil, err
	}
	return ms, nil
}

func machineSetCommand(req request.MachineSetGenerate, name string, replace bool) string {
	args := []string{"machineset", "generate", "--apply", "--name", name}
	for _, f := range [][2]string{{"--platform", req.Platform}, {"--image", req.Image}, {"--zone", req.Zone}, {"--instance-type", req.InstanceType}} {
		if f[1] != "" {
			args = append(args, f[0], f[1])
		}
	}
	if n := req.ReplicaCount(); n != 1 {
		args = append(args, "--replicas", fmt.Sprint(n))
	}
	if replace {
		args = append(args, "--yes")
	}
	return cmdline.Wmcon(args...)
}

// tryBYOHLogin tries to log in to a BYOH host as WMCO will (its user, the key wmcon logs in with) and says
// how it went; a host wmcon cannot reach from here may still be reachable from the cluster, so it never stops
// the add. Nothing is tried without SSH settings (no Configure backends).
func tryBYOHLogin(ctx context.Context, b actions.Backends, req request.BYOHAdd, sink event.Sink) {
	if b.Configure == nil || b.Configure.HostAt == nil {
		return
	}
	r := event.Reporter{Sink: sink, Action: req.Action(), Target: req.Address}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	r.Started("ssh", "trying SSH to "+req.User+"@"+req.Address)
	name, err := hostName(ctx, b.Configure.HostAt, model.BYOHInstance{Address: req.Address, User: req.User})
	if err != nil {
		r.Log("ssh", "could not log in from here ("+err.Error()+"): WMCO needs key-only SSH on port 22 for "+req.User+
			" with the key in "+config.PrivateKeySecret+"; a host reachable only from the cluster's network is fine")
		return
	}
	r.Done("ssh", req.User+"@"+req.Address+" answers; the host calls itself "+name)
}
