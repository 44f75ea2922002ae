// Package setup is the guided first-time setup: detecting from the cluster where it stands, the actions
// of its steps (the operator, the key, MachineSets and BYOH hosts, following the operator, workloads,
// the summary), and wmcon setup's run through them (package setup/steps defines the steps, which the
// console's wizard takes too).
package setup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/setup/steps"
)

// ActionSetup names the headless guided setup (wmcon setup), as the events of the flow itself carry it.
const ActionSetup = "setup"

// SetupOptions are what wmcon setup is told up front: the answers the console's wizard would ask for,
// and how far the run may go.
type SetupOptions struct {
	steps.Answers
	Yes      bool // apply each step after showing its plan; without it, setup shows the next plan and stops
	ReadOnly bool // --read-only: show, never apply
}

// SetupStopped is a setup that stopped before the end and can be resumed: a flag or --yes is needed, a wait
// ran out, a host was left part-configured. Hint says what to run; Changed says whether this run changed
// anything.
type SetupStopped struct {
	Step    event.SetupStepID
	Reason  string
	Hint    string
	Changed bool
}

func (e *SetupStopped) Error() string {
	return fmt.Sprintf("setup stopped at %s: %s — %s", e.Step, e.Reason, e.Hint)
}

// SetupResult is how a run of the setup ended.
type SetupResult struct {
	State   event.Setup // the last detected state
	Changed bool        // this run changed something
	Files   []string    // local files written (a generated key)
}

// setupRun is one run of the headless setup.
type setupRun struct {
	run  actions.Runner
	o    SetupOptions
	sink event.Sink
	r    event.Reporter
	res  SetupResult
}

// RunSetup takes the cluster from where it stands to a Ready Windows node, headless: it detects which steps
// are done (from the cluster alone, so a run resumes where the last one stopped), then runs the first step
// not done through the Runner (audited, refused under --read-only), showing its plan first, and detects
// again, until the setup is complete. What it needs and was not given stops it with the flag to pass
// (SetupStopped); without Yes it shows the next step's plan and stops. A failing step returns its error.
func RunSetup(ctx context.Context, run actions.Runner, o SetupOptions, sink event.Sink) (SetupResult, error) {
	s := &setupRun{run: run, o: o, sink: sink, r: event.Reporter{Sink: sink, Action: ActionSetup, Target: "cluster"}}
	err := s.loop(ctx)
	switch {
	case err == nil:
		s.r.Finish(event.Succeeded, "Windows node "+s.res.State.ReadyNode+" is Ready; the setup is complete", "")
	case errors.Is(err, context.Canceled):
		s.r.Finish(event.Cancelled, "setup cancelled at "+string(s.res.State.Next)+"; "+leftSentence(s.res.Changed),
			"resume: "+event.Run("setup")+" with the same flags")
	default:
		var stop *SetupStopped
		if errors.As(err, &stop) {
			stop.Changed = s.res.Changed
			s.r.Finish(event.Failed, "setup stopped at "+string(stop.Step)+": "+stop.Reason, stop.Hint)
		} else {
			s.r.Finish(event.Failed, "setup failed at "+string(s.res.State.Next)+": "+err.Error(),
				"fix it, then resume: "+event.Run("setup")+" (the steps done stay done)")
		}
	}
	return s.res, err
}

func leftSentence(changed bool) string {
	if changed {
		return "what this run did stays done; the step it was in may be part-way"
	}
	return "nothing was changed"
}

func (s *setupRun) loop(ctx context.Context) error {
	last := event.SetupStepID("")
	for round := 0; ; round++ {
		st, err := s.detect(ctx, round == 0)
		if err != nil {
			return err
		}
		s.res.State = st
		if added, err := s.pendingHosts(ctx, st); err != nil {
			return err
		} else if added {
			continue // the new hosts change what is next
		}
		if st.Next == event.SetupDone {
			return s.finish(ctx, st)
		}
		if st.Next == last {
			step := st.Step(st.Next)
			return &SetupStopped{Step: st.Next, Reason: "still not done after running it" + orEmpty(": ", step.Blocking), Hint: orOther(step.Hint, event.Run("setup"))}
		}
		last = st.Next
		s.r.Started(string(st.Next), st.Step(st.Next).Title)
		if err := s.step(ctx, st); err != nil {
			return err
		}
		s.r.Done(string(st.Next), st.Step(st.Next).Title+": done")
	}
}

// detect runs SetupDetect; the first time its event goes to the sink (the state is printed once).
func (s *setupRun) detect(ctx context.Context, show bool) (event.Setup, error) {
	var mu sync.Mutex
	var got *event.Setup
	capture := event.EmitFunc(func(e event.Event) {
		if e.Setup != nil {
			mu.Lock()
			got = e.Setup
			mu.Unlock()
		}
		if show || e.Kind == event.StepFailed {
			s.sink.Emit(e)
		}
	})
	if err := s.run.Run(ctx, request.SetupDetect{Standalone: s.o.Standalone}, capture); err != nil {
		return event.Setup{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	if got == nil {
		return event.Setup{}, errors.New("the detection reported no state")
	}
	if s.o.Standalone && got.Mode == event.ModeOperator && show {
		s.r.Log("detect", "WMCO is installed: the operator configures the hosts, --standalone does not apply")
	}
	return *got, nil
}

// step runs the first step not done.
func (s *setupRun) step(ctx context.Context, st event.Setup) error {
	step := st.Step(st.Next)
	switch st.Next {
	case event.SetupCheck: // a failure, not a pause: the cluster must change first
		return fmt.Errorf("%s: %s", step.Blocking, step.Hint)
	case event.SetupOperator:
		return s.operator(ctx, st)
	case event.SetupKey:
		return s.key(ctx, st)
	case event.SetupMachines:
		return s.machines(ctx, st)
	case event.SetupConfigure:
		return s.configure(ctx, st)
	case event.SetupWorkloads:
		if step.Blocking != "" {
			return &SetupStopped{Step: st.Next, Reason: step.Blocking, Hint: event.Run("triage", st.ReadyNode)}
		}
		return s.apply(ctx, st.Next, s.o.RuntimeClassEnsure(st))
	}
	return fmt.Errorf("unknown setup step %q", st.Next)
}

// apply shows req's plan (its preview), then runs req when the setup may change things; otherwise it
// stops saying so.
func (s *setupRun) apply(ctx context.Context, step event.SetupStepID, req request.Previewer) error {
	if err := s.run.Run(ctx, req.WithPreview(), s.sink); err != nil {
		return err
	}
	switch {
	case s.o.ReadOnly:
		return fmt.Errorf("--read-only is set: refusing to %s (the plan above is what it would do)", req.Title())
	case !s.o.Yes:
		return &SetupStopped{Step: step, Reason: "the plan above needs confirming", Hint: "run it again with --yes to apply it"}
	}
	s.res.Changed = true
	return s.run.Run(ctx, req, s.sink)
}

func (s *setupRun) operator(ctx context.Context, st event.Setup) error {
	in := s.o.OperatorInstall()
	if st.Mode == event.ModeOperator {
		// Subscribed already: following the install changes nothing, but for approving a Manual
		// InstallPlan, which is asked (and approved only with --yes).
		err := s.run.Run(ctx, in, s.sink)
		if err != nil && !errors.Is(err, context.Canceled) {
			return &SetupStopped{Step: st.Next, Reason: err.Error(),
				Hint: "--yes approves a Manual InstallPlan; see where OLM stands with " + event.Run("operator", "status")}
		}
		return err
	}
	if !s.o.Yes {
		s.r.Log(string(st.Next), "WMCO installs through OLM and then configures Windows Machines and BYOH hosts itself; "+
			"with --standalone there is no operator and wmcon configures each BYOH host")
	}
	return s.apply(ctx, st.Next, in)
}

func (s *setupRun) key(ctx context.Context, st event.Setup) error {
	req, ok := s.o.KeyInstall(st)
	if !ok {
		step := st.Step(st.Next)
		return &SetupStopped{Step: st.Next, Reason: orOther(step.Blocking, "no SSH key: "+strings.Join(step.Evidence, "; ")),
			Hint: "pass --key FILE (a private key without a passphrase) or --generate-key [--key-out PATH]"}
	}
	if err := s.apply(ctx, st.Next, req); err != nil {
		return err
	}
	if req.Generate {
		s.res.Files = append(s.res.Files, req.Out, req.Out+".pub")
	}
	return nil
}

func (s *setupRun) machines(ctx context.Context, st event.Setup) error {
	if len(s.o.BYOH) > 0 {
		return nil // pendingHosts added them; detection decides again
	}
	ms, ok := s.o.MachineSetGenerate()
	if !ok {
		step := st.Step(st.Next)
		hint := "pass --byoh ADDRESS=USER (a Windows Server reachable over SSH)"
		if steps.MachineSetsFit(st) {
			hint = "pass --machineset-image IMAGE (the platform's Windows image), or --byoh ADDRESS=USER"
		}
		return &SetupStopped{Step: st.Next, Reason: orOther(step.Blocking, "no Windows machines yet"), Hint: hint}
	}
	if st.Mode == event.ModeStandalone {
		return &SetupStopped{Step: st.Next, Reason: "Windows MachineSets need WMCO to configure their Machines",
			Hint: "in standalone mode pass --byoh ADDRESS=USER; or install WMCO (run without --standalone)"}
	}
	return s.apply(ctx, st.Next, ms)
}

// pendingHosts adds the --byoh hosts not yet in windows-instances, once the operator and key steps are
// done (WMCO takes a host up as soon as it is listed, with the key it has).
func (s *setupRun) pendingHosts(ctx context.Context, st event.Setup) (bool, error) {
	if !st.Step(event.SetupCheck).Done || !st.Step(event.SetupOperator).Done || !st.Step(event.SetupKey).Done {
		return false, nil
	}
	added := false
	known := map[string]bool{}
	for _, h := range st.Hosts {
		known[h.Name] = true
	}
	for _, h := range s.o.BYOH {
		if known[h.Address] {
			continue
		}
		if !added {
			s.r.Started(string(event.SetupMachines), "adding the BYOH hosts given with --byoh")
		}
		if err := s.apply(ctx, event.SetupMachines, h); err != nil {
			return false, err
		}
		added = true
	}
	if added {
		s.r.Done(string(event.SetupMachines), "BYOH hosts added")
	}
	return added, nil
}

func (s *setupRun) configure(ctx context.Context, st event.Setup) error {
	if st.Mode == event.ModeStandalone {
		return s.configureHosts(ctx, st)
	}
	return s.follow(ctx, st)
}

// configureHosts configures each BYOH host that is not a Ready node yet, one after another.
func (s *setupRun) configureHosts(ctx context.Context, st event.Setup) error {
	hosts := steps.ConfigureHosts(st)
	for _, h := range hosts {
		err := s.apply(ctx, st.Next, s.o.Configure(h))
		var stop *SetupStopped
		if err != nil && s.res.Changed && !errors.As(err, &stop) && !errors.Is(err, context.Canceled) {
			return &SetupStopped{Step: st.Next, Reason: "configuring " + h.Address + " failed: " + err.Error(),
				Hint: "fix what the failure says, then resume with " + event.Run("setup", "--standalone", "--yes") + " (configure resumes where the host stands)"}
		}
		if err != nil {
			return err
		}
	}
	if len(hosts) == 0 {
		step := st.Step(st.Next)
		return &SetupStopped{Step: st.Next, Reason: orOther(step.Blocking, "no BYOH host to configure and no Windows node is Ready"),
			Hint: "pass --byoh ADDRESS=USER"}
	}
	return nil
}

// follow follows the operator until the Machines and BYOH hosts not nodes yet are Ready nodes (a
// MachineSet's Machines once the machine API created them). It changes nothing, so it needs no --yes.
func (s *setupRun) follow(ctx context.Context, st event.Setup) error {
	req := s.o.Follow(st)
	if len(req.Targets()) == 0 {
		step := st.Step(st.Next)
		return &SetupStopped{Step: st.Next, Reason: orOther(step.Blocking, "nothing to follow: no Windows Machine or BYOH host"),
			Hint: "pass --byoh ADDRESS=USER or --machineset-image IMAGE"}
	}
	err := s.run.Run(ctx, req, s.sink)
	if err != nil && !errors.Is(err, context.Canceled) {
		return &SetupStopped{Step: st.Next, Reason: err.Error(), Hint: "the operator carries on; follow it again with " + event.Run("setup")}
	}
	return err
}

// finish runs the smoke test when asked and records the summary.
func (s *setupRun) finish(ctx context.Context, st event.Setup) error {
	if s.o.SmokeTest {
		if err := s.apply(ctx, event.SetupWorkloads, s.o.SmokeTestPod(st)); err != nil {
			return err
		}
	}
	if s.o.ReadOnly {
		return nil
	}
	return s.run.Run(ctx, steps.Summary(st, s.res.Files), s.sink)
}

func orOther(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
