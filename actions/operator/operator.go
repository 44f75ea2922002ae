// Package operator installs, inspects and uninstalls WMCO through OLM, and follows the operator's progress
// on a host it owns (configure --watch, the guided setup and upgrades follow it the same way).
package operator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	olm "github.com/operator-framework/api/pkg/operators/v1alpha1"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/cmdline"
	"github.com/wmcon/wmcon/config"
)

// OperatorInstall says what to install and how long to follow it.
type OperatorInstall struct {
	Options cluster.InstallOptions
	Wait    bool          // follow the InstallPlan and CSV until event.Succeeded (the console always does)
	Timeout time.Duration // for the wait; default 10 minutes
	Poll    time.Duration // how often the install's objects are read while waiting; default 1s
}

const actionOperatorInstall = "operator-install"

// InstallOperator subscribes to WMCO through OLM and follows the install. On an installed operator it says
// what is there and changes nothing.
func InstallOperator(ctx context.Context, o actions.OperatorOLM, in OperatorInstall, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: actionOperatorInstall, Target: config.OperatorName}
	opts, err := in.Options.Defaults()
	if err != nil {
		r.Finish(event.Failed, "bad options", err.Error())
		return err
	}
	st, err := o.State(ctx)
	if err != nil {
		return r.Fail("state", err, "check your access to "+config.OperatorNamespace)
	}
	if st.Installed() {
		r.Finish(event.Succeeded, st.Summary()+"; nothing changed", "")
		return nil
	}
	if st.Subscription == nil {
		r.Started("catalog", fmt.Sprintf("looking for %s in %s/%s, channel %s", config.OperatorName, opts.SourceNamespace, opts.Source, opts.Channel))
		offer, err := o.CheckCatalog(ctx, opts)
		if err != nil {
			return r.Fail("catalog", err, "")
		}
		r.Done("catalog", fmt.Sprintf("%s offers channels %v (default %s)", offer.Source, offer.Channels, offer.DefaultChannel))
	}
	if err := ensureSteps(ctx, o, opts, r); err != nil {
		return err
	}
	if !in.Wait {
		r.Finish(event.Succeeded, "subscribed; OLM installs the operator now", "follow it with wmcon operator status, or run install again with --wait")
		return nil
	}
	return followInstall(ctx, o, in, r)
}

func ensureSteps(ctx context.Context, o actions.OperatorOLM, opts cluster.InstallOptions, r event.Reporter) error {
	steps := []struct {
		name, what string
		run        func() (bool, error)
	}{
		{"namespace", "namespace " + config.OperatorNamespace, func() (bool, error) { return o.EnsureNamespace(ctx) }},
		{"operatorgroup", "OperatorGroup targeting " + config.OperatorNamespace, func() (bool, error) { return o.EnsureOperatorGroup(ctx) }},
		{"subscription", fmt.Sprintf("Subscription %s (%s, %s, %s)", config.OperatorName, opts.Source, opts.Channel, opts.Approval),
			func() (bool, error) { _, created, err := o.EnsureSubscription(ctx, opts); return created, err }},
	}
	for _, s := range steps {
		r.Started(s.name, s.what)
		changed, err := s.run()
		if err != nil {
			return r.Fail(s.name, err, "")
		}
		if changed {
			r.Done(s.name, s.what+": created")
		} else {
			r.Done(s.name, s.what+": already there")
		}
	}
	return nil
}

// followInstall waits for the InstallPlan (asking to approve a Manual one), then the CSV and the Deployment.
func followInstall(ctx context.Context, o actions.OperatorOLM, in OperatorInstall, r event.Reporter) error {
	timeout, poll := in.Timeout, in.Poll
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	if poll <= 0 {
		poll = time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	step, last, asked := "installplan", "", false
	r.Started(step, "waiting for OLM to resolve the Subscription into an InstallPlan")
	for {
		st, err := o.State(ctx)
		if err != nil {
			return r.Fail(step, err, "")
		}
		if st.Subscription == nil {
			return r.Fail(step, errors.New("the Subscription disappeared"), "someone deleted it; run wmcon operator install again")
		}
		if p := subscriptionFailure(st); p != "" {
			return r.Fail(step, errors.New(p), "check the catalog and channel: oc get packagemanifests -n openshift-marketplace "+config.OperatorName)
		}
		if msg := st.Summary(); msg != last {
			r.Progress(step, 0, 0, msg)
			last = msg
		}
		if plan := st.InstallPlan; plan != nil && step == "installplan" {
			if !plan.Spec.Approved {
				if asked {
					goto wait
				}
				asked = true
				ok, err := approve(ctx, o, r, plan)
				if err != nil || !ok {
					return err
				}
				goto wait
			}
			r.Done(step, "InstallPlan "+plan.Name+" approved")
			step = "csv"
			r.Started(step, "waiting for the ClusterServiceVersion to succeed")
		}
		if csv := st.CSV; csv != nil && step == "csv" {
			switch csv.Status.Phase {
			case olm.CSVPhaseFailed:
				return r.Fail(step, fmt.Errorf("CSV %s failed: %s: %s", csv.Name, csv.Status.Reason, csv.Status.Message),
					"see oc describe csv -n "+config.OperatorNamespace+" "+csv.Name)
			case olm.CSVPhaseSucceeded:
				r.Done(step, "CSV "+csv.Name+" Succeeded")
				step = "deployment"
				r.Started(step, "waiting for the operator's Deployment to be available")
			}
		}
		if step == "deployment" && st.DeploymentAvailable() {
			r.Done(step, "Deployment "+cluster.OperatorDeploymentKey+" available")
			r.Finish(event.Succeeded, st.Summary(), "")
			return nil
		}
	wait:
		select {
		case <-ctx.Done():
			err := fmt.Errorf("gave up waiting at %s: %s", step, last)
			if errors.Is(ctx.Err(), context.Canceled) {
				r.Finish(event.Cancelled, "stopped following the install; OLM goes on with it", "follow it with wmcon operator status")
				return ctx.Err()
			}
			return r.Fail(step, err, "follow it with wmcon operator status")
		case <-time.After(poll):
		}
	}
}

func subscriptionFailure(st cluster.OperatorState) string {
	for _, c := range st.Subscription.Status.Conditions {
		switch c.Type {
		case olm.SubscriptionResolutionFailed, olm.SubscriptionCatalogSourcesUnhealthy, olm.SubscriptionInstallPlanFailed, olm.SubscriptionBundleUnpackFailed:
			if c.Status == "True" {
				return string(c.Type) + ": " + c.Message
			}
		}
	}
	return ""
}

// approve asks whether to approve a Manual InstallPlan; false means the user left it waiting.
func approve(ctx context.Context, o actions.OperatorOLM, r event.Reporter, plan *olm.InstallPlan) (bool, error) {
	ans, err := r.Ask(ctx, event.Question{
		Title:  "InstallPlan " + plan.Name + " waits for approval (Manual)",
		Detail: []string{"installs " + fmt.Sprint(plan.Spec.ClusterServiceVersionNames), "from catalog " + plan.Spec.CatalogSource},
		Choices: []event.Choice{{Key: event.ChoiceLeave, Label: "leave it waiting"},
			{Key: event.ChoiceApprove, Label: "approve it", Confirm: "Approve InstallPlan " + plan.Name + " and install the operator?"}},
	})
	if err != nil {
		return false, r.Fail("installplan", err, "")
	}
	if ans != event.ChoiceApprove {
		hint := "approve it with wmcon operator install --wait --approve, or oc patch installplan " + cmdline.Quote(plan.Name) + " -n " +
			config.OperatorNamespace + " --type merge -p '{\"spec\":{\"approved\":true}}'"
		r.Emit(event.Event{Kind: event.StepFailed, Step: "installplan", Err: "InstallPlan " + plan.Name + " waits for approval", Hint: hint})
		r.Finish(event.Failed, "InstallPlan "+plan.Name+" left waiting for approval", hint)
		return false, errors.New("InstallPlan " + plan.Name + " waits for approval")
	}
	if err := o.ApproveInstallPlan(ctx, plan.Name); err != nil {
		return false, r.Fail("installplan", err, "")
	}
	r.Log("installplan", "approved InstallPlan "+plan.Name)
	return true, nil
}

// OperatorStatus reports what OLM says about WMCO, changing nothing.
func OperatorStatus(ctx context.Context, o actions.OperatorOLM, sink event.Sink) (cluster.OperatorState, error) {
	r := event.Reporter{Sink: sink, Action: "operator-status", Target: config.OperatorName}
	st, err := o.State(ctx)
	if err != nil {
		return st, r.Fail("state", err, "check your access to "+config.OperatorNamespace)
	}
	for _, line := range DescribeState(st) {
		r.Log("state", line)
	}
	r.Finish(event.Succeeded, st.Summary(), "")
	return st, nil
}

func DescribeState(st cluster.OperatorState) []string {
	yes := func(b bool) string {
		if b {
			return "present"
		}
		return "missing"
	}
	lines := []string{"namespace " + config.OperatorNamespace + ": " + yes(st.Namespace)}
	if g := st.OperatorGroup; g != nil {
		lines = append(lines, fmt.Sprintf("OperatorGroup %s targets %v", g.Name, g.Spec.TargetNamespaces))
	} else {
		lines = append(lines, "OperatorGroup: missing")
	}
	if s := st.Subscription; s != nil {
		lines = append(lines, fmt.Sprintf("Subscription %s: source %s, channel %s, approval %s, state %s", s.Name, s.Spec.CatalogSource,
			s.Spec.Channel, s.Spec.InstallPlanApproval, phaseOr(string(s.Status.State))))
	} else {
		lines = append(lines, "Subscription: missing")
	}
	if p := st.InstallPlan; p != nil {
		lines = append(lines, fmt.Sprintf("InstallPlan %s: %s, approved %v", p.Name, phaseOr(string(p.Status.Phase)), p.Spec.Approved))
	}
	if c := st.CSV; c != nil {
		lines = append(lines, fmt.Sprintf("CSV %s: %s %s", c.Name, phaseOr(string(c.Status.Phase)), c.Status.Message))
	}
	if st.Deployment != nil {
		lines = append(lines, fmt.Sprintf("Deployment %s available: %v", st.Deployment.Name, st.DeploymentAvailable()))
	}
	return append(lines, podLines(st)...)
}

// podLines describe the operator's pods (ready, restarts, the last exit) and the last lines of its log:
// configuration failures show up there first.
func podLines(st cluster.OperatorState) []string {
	var lines []string
	for _, p := range st.Pods {
		ready := "not ready"
		if p.Ready {
			ready = "ready"
		}
		line := fmt.Sprintf("pod %s: %s, %s, %d restart(s)", p.Name, phaseOr(p.Phase), ready, p.Restarts)
		if p.LastExit != "" {
			line += "; last exit: " + p.LastExit
		}
		lines = append(lines, line)
	}
	if st.Deployment != nil && len(st.Pods) == 0 {
		lines = append(lines, "no operator pod: the Deployment has none running (oc get pods -n "+config.OperatorNamespace+")")
	}
	switch {
	case st.LogErr != "":
		lines = append(lines, st.LogErr)
	case len(st.Log) > 0:
		lines = append(lines, fmt.Sprintf("operator log, last %d line(s) (all of it: oc logs -n %s deploy/%s -c %s):", len(st.Log),
			config.OperatorNamespace, cluster.OperatorDeploymentKey, config.OperatorContainer))
		for _, l := range st.Log {
			lines = append(lines, "  | "+strings.ReplaceAll(l, "\t", "  ")) // the operator's logger separates fields with tabs
		}
	}
	return lines
}

func phaseOr(p string) string {
	if p == "" {
		return "pending"
	}
	return p
}

// UninstallOperator deletes WMCO's Subscription and CSV after confirmation. Windows nodes stay as they are.
func UninstallOperator(ctx context.Context, o actions.OperatorOLM, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: "operator-uninstall", Target: config.OperatorName}
	st, err := o.State(ctx)
	if err != nil {
		return r.Fail("state", err, "")
	}
	if st.Subscription == nil && st.CSV == nil {
		r.Finish(event.Succeeded, "WMCO is not installed; nothing changed", "")
		return nil
	}
	ans, err := r.Ask(ctx, event.Question{Title: "Uninstall WMCO?",
		Detail: append(DescribeState(st), "Windows nodes, secrets and the namespace stay; nothing will configure or upgrade the nodes any more"),
		Choices: []event.Choice{{Key: event.ChoiceKeep, Label: "keep it"}, {Key: event.ChoiceUninstall, Label: "uninstall",
			Confirm: "Delete the Subscription and CSV of WMCO?"}}})
	if err != nil {
		return r.Fail("confirm", err, "")
	}
	if ans != event.ChoiceUninstall {
		r.Finish(event.Cancelled, "nothing changed", "")
		return nil
	}
	r.Started("uninstall", "deleting the Subscription and CSV")
	deleted, err := o.Uninstall(ctx, st)
	for _, d := range deleted {
		r.Log("uninstall", "deleted "+d)
	}
	if err != nil {
		return r.Fail("uninstall", err, "")
	}
	r.Done("uninstall", fmt.Sprintf("deleted %d objects", len(deleted)))
	r.Finish(event.Succeeded, "WMCO uninstalled; Windows nodes left as they are", "")
	return nil
}
