package setup

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	olm "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/operator"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/cmdline"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/localfile"
)

func init() {
	actions.Register(runOperatorInstall)
	actions.Register(runKeyInstall)
	actions.Register(runSetupFollow)
	actions.Register(runSetupSummary)
}

// maxKeyFile bounds a private key file read (a 16384-bit RSA key in PEM is under 13 kB).
const maxKeyFile = 64 << 10

func runOperatorInstall(ctx context.Context, b actions.Backends, req request.OperatorInstall, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: req.Action(), Target: config.OperatorName}
	s, err := b.GuidedSetup()
	if err != nil {
		return r.Fail("install", err, "")
	}
	opts, err := cluster.InstallOptions{Channel: req.Channel, Approval: olm.Approval(req.Approval), Source: req.Source,
		SourceNamespace: req.SourceNamespace}.Defaults()
	if err != nil {
		return r.Fail("options", err, "")
	}
	if !req.Preview {
		return operator.InstallOperator(ctx, s.OLM, operator.OperatorInstall{Options: opts, Wait: req.Wait, Timeout: req.Timeout}, sink)
	}
	st, err := s.OLM.State(ctx)
	if err != nil {
		return r.Fail("state", err, "check your access to "+config.OperatorNamespace)
	}
	plan := event.Plan{Title: "Install WMCO through OLM", Commands: []string{installCommand(opts)}}
	if st.Installed() {
		plan.Summary = []string{st.Summary() + ": nothing to install"}
		return showPlan(r, plan)
	}
	if st.Subscription == nil {
		offer, err := s.OLM.CheckCatalog(ctx, opts)
		if err != nil {
			return r.Fail("catalog", err, "")
		}
		plan.Summary = append(plan.Summary, fmt.Sprintf("catalog %s offers %s on channels %v", offer.Source, config.OperatorName, offer.Channels))
	}
	plan.Summary = append(plan.Summary,
		"create namespace "+config.OperatorNamespace+" (labelled "+cluster.ClusterMonitoringKey+": \"true\")",
		"create OperatorGroup "+config.OperatorName+" targeting only that namespace",
		fmt.Sprintf("create Subscription %s: channel %s, approval %s, source %s/%s", config.OperatorName, opts.Channel, opts.Approval, opts.SourceNamespace, opts.Source),
		"then follow the InstallPlan and the CSV until the operator runs (a Manual InstallPlan is asked about)")
	if st.Subscription != nil {
		plan.Summary = []string{"the Subscription exists (" + st.Summary() + "): follow the install until the operator runs"}
	}
	plan.YAML = yamlOf(cluster.OperatorNamespaceObject()) + "---\n" + yamlOf(cluster.OperatorGroupObject()) + "---\n" + yamlOf(cluster.SubscriptionObject(opts))
	return showPlan(r, plan)
}

func installCommand(o cluster.InstallOptions) string {
	return cmdline.Wmcon("operator", "install", "--channel", o.Channel, "--approval", string(o.Approval), "--source", o.Source, "--wait")
}

func runKeyInstall(ctx context.Context, b actions.Backends, req request.KeyInstall, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: req.Action(), Target: config.PrivateKeySecret}
	s, err := b.GuidedSetup()
	if err != nil {
		return r.Fail("key", err, "")
	}
	switch {
	case req.Generate && req.File != "":
		return r.Fail("key", errors.New("give a key file or generate one, not both"), "")
	case req.Generate:
		return generateKey(ctx, s, req, r)
	case req.File == "":
		return r.Fail("key", errors.New("no key given: a private key file, or generate one"), "pass --key FILE or --generate-key")
	}
	pemBytes, err := localfile.Read(req.File, maxKeyFile)
	if err != nil {
		return r.Fail("read", fmt.Errorf("read the key %s: %w", req.File, err), "")
	}
	info, _, err := cluster.ValidatePrivateKey(pemBytes)
	if err != nil {
		return r.Fail("validate", fmt.Errorf("%s: %w", req.File, err), "")
	}
	if !req.Preview {
		return keyInstalled(ctx, s, req, r, InstallKey(ctx, s.Keys, s.OLM, pemBytes, r.Sink))
	}
	plan := event.Plan{Title: "Install the SSH key " + req.File,
		Summary:  []string{fmt.Sprintf("the key: %s %d bits %s (never shown)", info.Type, info.Bits, info.Fingerprint)},
		Commands: []string{cmdline.Wmcon("key", "create", "--from-file", req.File)}}
	more, err := keyConsequences(ctx, s, info.Fingerprint)
	if err != nil {
		return r.Fail("state", err, "")
	}
	plan.Summary = append(append(plan.Summary, more...), standaloneNote(req)...)
	return showPlan(r, plan)
}

// standaloneNote is the plan's line about recording standalone mode, when the setup runs in it.
func standaloneNote(req request.KeyInstall) []string {
	if !req.Standalone {
		return nil
	}
	return []string{"annotate the secret " + config.SetupModeAnnotation + "=standalone, so a setup resumed later knows you chose standalone mode"}
}

// keyConsequences says what installing the key with fingerprint fp does to the cluster.
func keyConsequences(ctx context.Context, s *actions.SetupBackends, fp string) ([]string, error) {
	st, err := s.Keys.State(ctx)
	if err != nil {
		return nil, err
	}
	op, err := s.OLM.State(ctx)
	if err != nil {
		return nil, err
	}
	secret := config.OperatorNamespace + "/" + config.PrivateKeySecret
	userData := userDataConsequence(op.Installed())
	switch {
	case st.Key == nil:
		return []string{"create secret " + secret + " (key " + config.PrivateKeySecretKey + ")", userData}, nil
	case st.Key.Fingerprint == fp:
		if !op.Installed() && (st.UserDataKey == nil || st.UserDataKey.Fingerprint != fp) {
			return []string{secret + " already holds this key", userData}, nil
		}
		return []string{secret + " already holds this key: nothing changes"}, nil
	}
	return []string{"replace secret " + secret + " (now " + st.Key.Type + " " + st.Key.Fingerprint + "): you will be asked to confirm",
		"with WMCO installed, Machine-backed Windows nodes whose pub-key-hash no longer matches are recreated, BYOH nodes reconfigured",
		userData}, nil
}

// userDataConsequence says who writes windows-user-data for a new key.
func userDataConsequence(wmco bool) string {
	secret := config.MachineAPINamespace + "/" + config.UserDataSecret
	if wmco {
		return "WMCO rewrites " + secret + " from it"
	}
	return "write secret " + secret + " authorizing it (standalone: WMCO is not installed to write it; rewritten whenever the key changes)"
}

func generateKey(ctx context.Context, s *actions.SetupBackends, req request.KeyInstall, r event.Reporter) error {
	kind := req.Type
	if kind == "" {
		kind = "ed25519"
	}
	if req.Out == "" {
		return r.Fail("generate", errors.New("no file to keep the new private key in"), "pass --key-out PATH (PATH.pub gets the public key)")
	}
	for _, p := range []string{req.Out, req.Out + ".pub"} {
		if _, err := os.Lstat(p); err == nil {
			return r.Fail("generate", fmt.Errorf("%s exists: a generated key never overwrites a file", p), "choose another path, or install that key with --key "+cmdline.Quote(req.Out))
		}
	}
	if req.Preview {
		plan := event.Plan{Title: "Generate an SSH key and install it",
			Summary: []string{"generate a new " + kind + " key pair: private key " + req.Out + " (0600), public key " + req.Out + ".pub",
				"create secret " + config.OperatorNamespace + "/" + config.PrivateKeySecret + " from it (the key is never shown)"},
			Commands: []string{cmdline.Wmcon("key", "generate", "--type", kind, "--out", req.Out)}}
		st, err := s.Keys.State(ctx)
		if err != nil {
			return r.Fail("state", err, "")
		}
		op, err := s.OLM.State(ctx)
		if err != nil {
			return r.Fail("state", err, "")
		}
		plan.Summary = append(append(plan.Summary, userDataConsequence(op.Installed())), standaloneNote(req)...)
		if st.Key != nil {
			plan.Summary = append(plan.Summary, "it replaces the current key ("+st.Key.Type+" "+st.Key.Fingerprint+"): you will be asked to confirm")
		}
		return showPlan(r, plan)
	}
	if s.ReadOnly {
		return r.Fail("generate", errors.New("read-only: refusing to generate and install a key"), "run without --read-only")
	}
	return keyInstalled(ctx, s, req, r, GenerateAndInstallKey(ctx, s.Keys, s.OLM, kind, req.Out, r.Sink))
}

// keyInstalled follows a key install that succeeded (err == nil): in standalone mode the choice is recorded
// on the secret, and the backends are told, so later logins use the key.
func keyInstalled(ctx context.Context, s *actions.SetupBackends, req request.KeyInstall, r event.Reporter, err error) error {
	if err != nil {
		return err
	}
	if req.Standalone {
		if err := s.Keys.MarkStandalone(ctx); err != nil {
			r.Log("secret", "the key is installed, but standalone mode could not be recorded ("+err.Error()+"): resume with "+event.Run("setup", "--standalone"))
		} else {
			r.Log("secret", "recorded standalone mode on the secret ("+config.SetupModeAnnotation+")")
		}
	}
	if s.KeyInstalled != nil {
		s.KeyInstalled(ctx)
	}
	return nil
}

// runSetupFollow follows every Machine and host at once until each is a Ready node.
func runSetupFollow(ctx context.Context, b actions.Backends, req request.SetupFollow, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: req.Action(), Target: "cluster"}
	s, err := b.GuidedSetup()
	if err != nil {
		return r.Fail("follow", err, "")
	}
	if s.Watch == nil {
		return r.Fail("follow", errors.New("following the operator is not available here"), "")
	}
	if len(req.Targets()) == 0 {
		return r.Fail("follow", errors.New("nothing to follow: name Machines, MachineSets or BYOH hosts"), "")
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r.Started("follow", "following "+strings.Join(req.Targets(), ", ")+" until each is a Ready node (nothing is changed)")
	var mu sync.Mutex
	var failed []string
	var wg sync.WaitGroup
	follow := func(name string, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(); err != nil {
				mu.Lock()
				failed = append(failed, name+": "+err.Error())
				mu.Unlock()
			}
		}()
	}
	for _, m := range req.Machines {
		follow(m, func() error { return followMachine(ctx, s, m, sink) })
	}
	for _, h := range req.Hosts {
		follow(h, func() error { return operator.WatchOperator(ctx, s.Watch, operator.WatchOptions{Addr: h}, sink) })
	}
	for _, ms := range req.MachineSets {
		follow("MachineSet "+ms, func() error {
			machines, err := machinesOf(ctx, s, ms, r)
			if err != nil {
				return err
			}
			var inner sync.WaitGroup
			errs := make([]error, len(machines))
			for i, m := range machines {
				inner.Add(1)
				go func() { defer inner.Done(); errs[i] = followMachine(ctx, s, m, sink) }()
			}
			inner.Wait()
			return errors.Join(errs...)
		})
	}
	wg.Wait()
	sort.Strings(failed)
	switch {
	case len(failed) == 0:
		r.Done("follow", "every one is a Ready node")
		r.Finish(event.Succeeded, strings.Join(req.Targets(), ", ")+": Ready", "")
		return nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		err = fmt.Errorf("not Ready after %s: %s", timeout, strings.Join(failed, "; "))
		r.Failed("follow", err, "")
		r.Finish(event.Failed, "gave up following; the operator carries on", "follow it again: "+event.Run("setup"))
		return err
	case ctx.Err() != nil:
		r.Failed("follow", ctx.Err(), "")
		r.Finish(event.Cancelled, "stopped following; the operator carries on", "follow it again: "+event.Run("setup"))
		return ctx.Err()
	}
	err = errors.New(strings.Join(failed, "; "))
	return r.Fail("follow", err, "")
}

// machinesOf waits until the machine API has created the Machines of a MachineSet (as many as its
// replicas) and returns their names.
func machinesOf(ctx context.Context, s *actions.SetupBackends, set string, r event.Reporter) ([]string, error) {
	said := false
	for {
		f, err := s.Ops.SetupFacts(ctx)
		if err != nil && ctx.Err() == nil {
			r.Log("follow", "could not read the Machines: "+err.Error())
		}
		want := int32(-1)
		for _, ms := range f.MachineSets {
			if ms.Name == set {
				want = ms.Replicas
			}
		}
		var names []string
		for _, m := range f.Machines {
			if m.MachineSet == set {
				names = append(names, m.Name)
			}
		}
		switch {
		case err == nil && want < 0:
			return nil, errors.New("MachineSet " + set + " is not there (deleted?)")
		case err == nil && want == 0:
			return nil, errors.New("MachineSet " + set + " has 0 replicas: scale it up (" + cmdline.Wmcon("machineset", "scale", set, "1") + ")")
		case err == nil && int32(len(names)) >= want:
			return names, nil
		case !said:
			r.Log("follow", "waiting for the machine API to create the Machines of "+set)
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// followMachine reports a Machine's phase until it has an address or a node, then follows the operator
// configuring it (WatchOperator).
func followMachine(ctx context.Context, s *actions.SetupBackends, name string, sink event.Sink) error {
	if !strings.Contains(name, "/") {
		name = config.MachineAPINamespace + "/" + name
	}
	r := event.Reporter{Sink: sink, Action: operator.WatchAction, Target: name}
	r.Started(operator.StepWatch, "following Machine "+name+" until it is a Ready node (nothing is changed)")
	last := "\x00"
	for {
		f, err := s.Ops.SetupFacts(ctx)
		if err != nil && ctx.Err() == nil {
			r.Log(operator.StepWatch, "could not read the Machine: "+err.Error())
		}
		for _, m := range f.Machines {
			if m.Name != name {
				continue
			}
			if m.Phase != last {
				r.Log(operator.StepWatch, "Machine "+name+": phase "+event.OrNone(m.Phase))
				last = m.Phase
			}
			if m.Phase == "Failed" {
				err := errors.New("Machine " + name + " failed")
				r.Failed(operator.StepWatch, err, "see oc describe machine -n "+config.MachineAPINamespace+" "+strings.TrimPrefix(name, config.MachineAPINamespace+"/"))
				return err
			}
			if addr := firstIPv4(m.Addresses); addr != "" || m.Node != "" {
				r.Done(operator.StepWatch, "Machine "+name+" provisioned"+orEmpty(" at ", addr)+orEmpty(", node ", m.Node))
				return operator.WatchOperator(ctx, s.Watch, operator.WatchOptions{Addr: addr, Node: m.Node}, sink)
			}
		}
		select {
		case <-ctx.Done():
			r.Failed(operator.StepWatch, ctx.Err(), "")
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

func firstIPv4(addrs []string) string {
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip != nil && ip.To4() != nil {
			return a
		}
	}
	return ""
}

// runSetupSummary reports what the setup made (each a step, so the audit record lists them).
func runSetupSummary(ctx context.Context, b actions.Backends, req request.SetupSummary, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: req.Action(), Target: "cluster"}
	s, err := b.GuidedSetup()
	if err != nil {
		return r.Fail("summary", err, "")
	}
	op, err := s.OLM.State(ctx)
	if err != nil {
		return r.Fail("summary", err, "")
	}
	keys, err := s.Keys.State(ctx)
	if err != nil {
		return r.Fail("summary", err, "")
	}
	f, err := s.Ops.SetupFacts(ctx)
	if err != nil {
		return r.Fail("summary", err, "")
	}
	for _, l := range summaryLines(op, keys, f, req) {
		r.Done(l[0], l[1])
	}
	msg := "setup summary recorded in the audit log"
	if req.Node != "" {
		msg = "Windows node " + req.Node + " is Ready; " + msg
	}
	r.Finish(event.Succeeded, msg, "")
	return nil
}

// summaryLines are the summary's (step, line) pairs: the operator, the key, the machines, the nodes, the
// RuntimeClasses, the local files.
func summaryLines(op cluster.OperatorState, keys cluster.KeyState, f cluster.SetupFacts, req request.SetupSummary) [][2]string {
	var out [][2]string
	add := func(step, line string) { out = append(out, [2]string{step, line}) }
	if op.Subscription != nil || op.CSV != nil {
		add("operator", "namespace "+config.OperatorNamespace+", OperatorGroup and Subscription "+config.OperatorName+": "+op.Summary())
	} else {
		add("operator", "no operator (standalone: wmcon configures the hosts)")
	}
	if keys.Key != nil {
		add("key", fmt.Sprintf("secret %s/%s: %s %s", config.OperatorNamespace, config.PrivateKeySecret, keys.Key.Type, keys.Key.Fingerprint))
	}
	for _, ms := range f.MachineSets {
		add("machines", fmt.Sprintf("MachineSet %s/%s (%d replicas)", config.MachineAPINamespace, ms.Name, ms.Replicas))
	}
	for _, h := range setupHosts(f) {
		if h.Kind == "byoh" {
			add("machines", "BYOH host "+h.Name+" (user "+h.User+") in "+config.BYOHConfigMap+orEmpty(": node ", h.Node))
		}
	}
	for _, n := range f.Nodes {
		state := "not Ready"
		if n.Status == "Ready" {
			state = "Ready"
		}
		add("nodes", fmt.Sprintf("Windows node %s (%s, build %s, %s)", n.Name, event.OrNone(n.InternalIP), event.OrNone(n.WindowsBuild), state))
	}
	for _, rc := range f.RuntimeClasses {
		if rc.Scheduling != nil && rc.Scheduling.NodeSelector[config.OSLabel] == "windows" {
			add("workloads", "RuntimeClass "+rc.Name+" (Windows build "+event.OrNone(rc.Scheduling.NodeSelector[config.WindowsBuildLabel])+")")
		}
	}
	for _, file := range req.Files {
		add("files", "local file "+file)
	}
	return out
}

// byohPlan is the preview of adding a host to windows-instances: the entry, checked, and the ConfigMap.
func byohPlan(ctx context.Context, req request.BYOHAdd) (event.Plan, error) {
	entry := map[string]string{req.Address: "username=" + req.User}
	if problems := cluster.ValidateBYOH(ctx, net.DefaultResolver, entry); len(problems) > 0 {
		return event.Plan{}, errors.New(problems[0].String())
	}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: config.BYOHConfigMap, Namespace: config.OperatorNamespace}, Data: entry}
	return event.Plan{Title: "Add BYOH host " + req.Address,
		Summary: []string{"add " + req.Address + ": username=" + req.User + " to " + config.OperatorNamespace + "/" + config.BYOHConfigMap +
			" (created when missing; other entries are kept)",
			"with WMCO, the operator then configures the host; standalone, wmcon configures it next"},
		YAML: yamlOf(cm), Commands: []string{cmdline.Wmcon("byoh", "add", req.Address, "--user", req.User)}}, nil
}
