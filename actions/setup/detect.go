package setup

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	configv1 "github.com/openshift/api/config/v1"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/setup/steps"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
)

// SetupInputs are what DetectSetup decides from: the cluster's state, read once.
type SetupInputs struct {
	Doctor     diagnosis.Report
	Operator   cluster.OperatorState
	Key        cluster.KeyState
	Facts      cluster.SetupFacts
	Standalone bool // the user chose standalone mode
}

// ReadSetupInputs reads what DetectSetup needs.
func ReadSetupInputs(ctx context.Context, s *actions.SetupBackends, standalone bool) (SetupInputs, error) {
	in := SetupInputs{Standalone: standalone}
	if s.Doctor == nil || s.OLM == nil || s.Keys == nil || s.Ops == nil {
		return in, errors.New("the guided setup is not available here: no cluster connection")
	}
	var err error
	if in.Doctor, err = s.Doctor(ctx); err != nil {
		return in, fmt.Errorf("doctor: %w", err)
	}
	if in.Operator, err = s.OLM.State(ctx); err != nil {
		return in, fmt.Errorf("read WMCO's install: %w", err)
	}
	if in.Key, err = s.Keys.State(ctx); err != nil {
		return in, fmt.Errorf("read %s: %w", config.PrivateKeySecret, err)
	}
	if in.Facts, err = s.Ops.SetupFacts(ctx); err != nil {
		return in, err
	}
	return in, nil
}

// laterSteps are the doctor checks that the setup's own later steps fix: failing, they do not block the
// check step.
var laterSteps = map[string]bool{"wmco": true, "private-key": true, "user-data": true}

// machineSetPlatform says whether Windows MachineSets can be used on platform p.
func machineSetPlatform(p configv1.PlatformType) bool {
	for _, known := range cluster.MachineSetPlatforms {
		if p == known {
			return true
		}
	}
	return false
}

// DetectSetup decides, from the cluster's state only, which steps of the guided setup are done (see
// request.SetupDetect for the rule of each step). The configure step is done when a Windows node is Ready
// and every Windows Machine and BYOH host has a node: one that registered but is not Ready is a matter for
// triage, not for the setup.
func DetectSetup(in SetupInputs) event.Setup {
	s := event.Setup{Platform: string(in.Facts.Platform), MachineSets: machineSetPlatform(in.Facts.Platform)}
	for _, ms := range in.Facts.MachineSets {
		s.MachineSetNames = append(s.MachineSetNames, ms.Name)
	}
	for _, n := range in.Facts.Nodes {
		s.Nodes = append(s.Nodes, event.SetupNode{Name: n.Name, Ready: n.Status == model.NodeReady, Build: n.WindowsBuild,
			Address: n.InternalIP, Version: n.WMCOVersion})
	}
	s.Hosts = setupHosts(in.Facts)
	operator := operatorStep(in, &s) // first: the mode it finds decides the others
	byID := map[event.SetupStepID]event.SetupStep{event.SetupCheck: checkStep(in, s.Mode), event.SetupOperator: operator,
		event.SetupKey: keyStep(in), event.SetupMachines: machinesStep(in, s), event.SetupConfigure: configureStep(in, s)}
	byID[event.SetupWorkloads] = workloadsStep(in, &s)
	done := event.SetupStep{Done: true}
	for _, st := range byID {
		done.Done = done.Done && st.Done
	}
	if done.Done {
		done.Evidence = []string{"a Windows node is Ready and workloads can be sent to it with RuntimeClass " + s.RuntimeClass}
	}
	byID[event.SetupDone] = done
	for _, step := range steps.All { // in the steps' order, under their titles
		st := byID[step.ID]
		st.ID, st.Title = step.ID, step.TitleIn(s.Mode)
		s.Steps = append(s.Steps, st)
	}
	s.Next = event.SetupDone
	for _, st := range s.Steps {
		if !st.Done {
			s.Next = st.ID
			break
		}
	}
	return s
}

func checkStep(in SetupInputs, mode string) event.SetupStep {
	var st event.SetupStep
	var blocking []string
	for _, c := range in.Doctor.Checks {
		if c.Status != diagnosis.CheckFail || laterSteps[c.ID] || (mode == event.ModeStandalone && c.ID == "access-operator") {
			continue
		}
		blocking = append(blocking, c.Title+": "+c.Detail)
		st.Evidence = append(st.Evidence, "✗ "+c.Title+": "+c.Detail+orEmpty(" — ", c.Fix))
	}
	warn := in.Doctor.Count(diagnosis.CheckWarn)
	if len(blocking) == 0 {
		st.Done = true
		st.Evidence = append(st.Evidence, fmt.Sprintf("%d checks: none blocks the setup (%d warnings)", len(in.Doctor.Checks), warn))
		return st
	}
	st.Blocking = fmt.Sprintf("%d doctor %s fail: %s", len(blocking), event.Plural(len(blocking), "check", "checks"), strings.Join(blocking, "; "))
	st.Hint = event.Run("doctor") + " and fix what each failing check says"
	return st
}

func operatorStep(in SetupInputs, s *event.Setup) event.SetupStep {
	var st event.SetupStep
	op := in.Operator
	switch {
	case op.Installed():
		s.Mode, st.Done = event.ModeOperator, true
		st.Evidence = []string{op.Summary()}
		if !op.DeploymentAvailable() && op.Deployment != nil {
			st.Evidence = append(st.Evidence, "its Deployment is not available yet")
		}
		return st
	case op.Subscription != nil || op.CSV != nil:
		s.Mode = event.ModeOperator
		st.Evidence = []string{op.Summary()}
		st.Blocking = "WMCO is still installing: " + op.Summary()
		st.Hint = event.Run("operator", "install", "--wait") + " (add --approve for a Manual InstallPlan)"
		if op.CSV != nil && op.CSV.Status.Phase == "Failed" {
			st.Blocking = "WMCO's install failed: " + op.Summary()
			st.Hint = "see oc describe csv -n " + config.OperatorNamespace + " " + op.CSV.Name
		}
		return st
	case in.Standalone:
		s.Mode, st.Done = event.ModeStandalone, true
		st.Evidence = []string{"standalone mode chosen: no operator; wmcon configures each host itself"}
		return st
	case in.Key.Standalone:
		s.Mode, st.Done = event.ModeStandalone, true
		st.Evidence = []string{"standalone mode, chosen when the key was installed (" + config.PrivateKeySecret + " is annotated " +
			config.SetupModeAnnotation + "=standalone): no operator; wmcon configures each host itself"}
		return st
	}
	for _, n := range in.Facts.Nodes {
		if strings.HasPrefix(n.WMCOVersion, config.StandaloneVersionPrefix) {
			s.Mode, st.Done = event.ModeStandalone, true
			st.Evidence = []string{"WMCO is not installed and node " + n.Name + " was configured by wmcon (version " + n.WMCOVersion + "): standalone mode"}
			return st
		}
	}
	st.Evidence = []string{op.Summary()}
	st.Hint = "install WMCO: " + event.Run("setup", "--yes") + "; or configure hosts without it: " + event.Run("setup", "--standalone", "--yes")
	return st
}

func keyStep(in SetupInputs) event.SetupStep {
	var st event.SetupStep
	k := in.Key
	switch {
	case k.Key == nil:
		st.Evidence = []string{"secret " + config.OperatorNamespace + "/" + config.PrivateKeySecret + " is missing"}
		st.Hint = event.Run("setup", "--key", "FILE") + ", or " + event.Run("setup", "--generate-key", "--yes")
	case k.KeyProblem != "":
		st.Evidence = []string{fmt.Sprintf("%s %d bits %s", k.Key.Type, k.Key.Bits, k.Key.Fingerprint)}
		st.Blocking = "the key cannot be used: " + k.KeyProblem
		st.Hint = "replace it: " + event.Run("key", "create", "--from-file", "FILE", "--yes")
	default:
		st.Done = true
		st.Evidence = []string{fmt.Sprintf("%s %d bits %s", k.Key.Type, k.Key.Bits, k.Key.Fingerprint)}
		if k.UserDataKey != nil && k.UserDataKey.Fingerprint == k.Key.Fingerprint {
			st.Evidence = append(st.Evidence, config.UserDataSecret+" holds its public key")
		}
	}
	return st
}

func machinesStep(in SetupInputs, s event.Setup) event.SetupStep {
	var st event.SetupStep
	for _, ms := range in.Facts.MachineSets {
		st.Evidence = append(st.Evidence, fmt.Sprintf("MachineSet %s: %d replicas", ms.Name, ms.Replicas))
		st.Done = st.Done || ms.Replicas > 0
	}
	for _, h := range s.Hosts {
		if h.Kind == "byoh" {
			st.Evidence = append(st.Evidence, "BYOH host "+h.Name+" (user "+h.User+")")
			st.Done = true
		}
	}
	if s.Mode == event.ModeStandalone && len(s.Nodes) > 0 {
		st.Done = true
		st.Evidence = append(st.Evidence, fmt.Sprintf("%d Windows %s", len(s.Nodes), event.Plural(len(s.Nodes), "node", "nodes")))
	}
	if st.Done {
		return st
	}
	if len(in.Facts.MachineSets) > 0 {
		st.Blocking = "the Windows MachineSets have no replicas"
		st.Hint = event.Run("machineset", "scale", in.Facts.MachineSets[0].Name, "1")
		return st
	}
	st.Hint = event.Run("setup", "--byoh", "ADDRESS=USER", "--yes")
	if s.MachineSets && s.Mode != event.ModeStandalone {
		st.Hint = event.Run("setup", "--machineset-image", "IMAGE", "--yes") + ", or " + st.Hint
	}
	return st
}

func configureStep(in SetupInputs, s event.Setup) event.SetupStep {
	var st event.SetupStep
	var waiting []string
	for _, h := range s.Hosts {
		switch {
		case h.Ready:
			st.Evidence = append(st.Evidence, h.Kind+" "+h.Name+": node "+h.Node+" Ready")
		case h.Node != "": // registered: its readiness is the node's business (triage), not the setup's
			st.Evidence = append(st.Evidence, h.Kind+" "+h.Name+": node "+h.Node+" not Ready ("+event.Run("triage", h.Node)+")")
		default:
			st.Evidence = append(st.Evidence, h.Kind+" "+h.Name+": no node yet"+orEmpty(", phase ", h.Phase))
			waiting = append(waiting, h.Name)
			if h.Phase == "Failed" {
				st.Blocking = "Machine " + h.Name + " failed: see oc describe machine -n " + config.MachineAPINamespace + " " + strings.TrimPrefix(h.Name, config.MachineAPINamespace+"/")
			}
		}
	}
	ready := readyNodes(s)
	if len(ready) > 0 && len(waiting) == 0 {
		st.Done = true
		if len(s.Hosts) == 0 {
			st.Evidence = append(st.Evidence, "Windows node "+strings.Join(ready, ", ")+" Ready")
		}
		return st
	}
	switch {
	case s.Mode == event.ModeStandalone && len(waiting) > 0:
		st.Hint = event.Run("setup", "--standalone", "--yes") + " (configures " + strings.Join(waiting, ", ") + ")"
	case len(waiting) > 0:
		st.Hint = event.Run("setup") + " (follows the operator until " + request.UntilReadyNodes(waiting) + ")"
	}
	return st
}

func workloadsStep(in SetupInputs, s *event.Setup) event.SetupStep {
	var st event.SetupStep
	node := newestReady(in.Facts.Nodes)
	if node == nil {
		st.Blocking = "no Windows node is Ready yet"
		return st
	}
	s.ReadyNode, s.Build = node.Name, node.WindowsBuild
	if s.Build == "" {
		st.Blocking = "node " + node.Name + " has no " + config.WindowsBuildLabel + " label"
		return st
	}
	for i := range in.Facts.RuntimeClasses {
		rc := &in.Facts.RuntimeClasses[i]
		if RuntimeClassFits(rc, s.Build) == "" {
			s.RuntimeClass, st.Done = rc.Name, true
			st.Evidence = []string{"RuntimeClass " + rc.Name + " sends pods to Windows build " + s.Build + " (node " + node.Name + ")"}
			return st
		}
	}
	st.Evidence = []string{"no RuntimeClass selects Windows build " + s.Build + " (node " + node.Name + ")"}
	st.Hint = event.Run("setup", "--yes") + " creates RuntimeClass " + request.DefaultRuntimeClassName(s.Build)
	return st
}

// setupHosts lists the Windows Machines and the BYOH entries, each with its node.
func setupHosts(f cluster.SetupFacts) []event.SetupHost {
	var out []event.SetupHost
	for _, m := range f.Machines {
		h := event.SetupHost{Kind: "machine", Name: m.Name, Phase: m.Phase, Node: m.Node}
		if len(m.Addresses) > 0 {
			h.Address = m.Addresses[0]
		}
		h.Ready = nodeReady(f.Nodes, h.Node)
		out = append(out, h)
	}
	addrs := make([]string, 0, len(f.BYOH))
	for a := range f.BYOH {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	for _, a := range addrs {
		h := event.SetupHost{Kind: "byoh", Name: a, Address: a, User: strings.TrimPrefix(f.BYOH[a], "username=")}
		for _, n := range f.Nodes {
			if n.InternalIP == a || n.InternalDNS == a || n.Name == a {
				h.Node, h.Ready = n.Name, n.Status == model.NodeReady
			}
		}
		out = append(out, h)
	}
	return out
}

func nodeReady(nodes []model.NodeInfo, name string) bool {
	for _, n := range nodes {
		if n.Name == name {
			return n.Status == model.NodeReady
		}
	}
	return false
}

func readyNodes(s event.Setup) []string {
	var out []string
	for _, n := range s.Nodes {
		if n.Ready {
			out = append(out, n.Name)
		}
	}
	return out
}

// newestReady is the most recently created Ready Windows node; nil when none is Ready.
func newestReady(nodes []model.NodeInfo) *model.NodeInfo {
	var best *model.NodeInfo
	for i := range nodes {
		n := &nodes[i]
		if n.Status == model.NodeReady && (best == nil || !n.Created.Before(best.Created)) {
			best = n
		}
	}
	return best
}

func orEmpty(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func init() { actions.Register(runSetupDetect) }

// runSetupDetect reports where the setup stands as one SetupState event.
func runSetupDetect(ctx context.Context, b actions.Backends, req request.SetupDetect, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: req.Action(), Target: req.Targets()[0]}
	s, err := b.GuidedSetup()
	if err != nil {
		return r.Fail("detect", err, "")
	}
	in, err := ReadSetupInputs(ctx, s, req.Standalone)
	if err != nil {
		return r.Fail("detect", err, "check the connection and your access: "+event.Run("doctor"))
	}
	state := DetectSetup(in)
	r.Emit(event.Event{Kind: event.SetupState, Step: "detect", Message: "next: " + string(state.Next), Setup: &state})
	r.Finish(event.Succeeded, setupSentence(state), "")
	return nil
}

// setupSentence says in one line where the setup stands.
func setupSentence(s event.Setup) string {
	if s.Next == event.SetupDone {
		return "the setup is complete: " + s.Step(event.SetupDone).Evidence[0]
	}
	n := 0
	for _, st := range s.Steps {
		if st.Done {
			n++
		}
	}
	next := s.Step(s.Next)
	msg := fmt.Sprintf("%d of %d steps done; next: %s", n, len(s.Steps)-1, next.Title)
	if next.Blocking != "" {
		msg += " (blocked: " + next.Blocking + ")"
	}
	return msg
}
