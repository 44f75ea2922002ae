package wizard

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/actions/setup/steps"
	"github.com/wmcon/wmcon/ui/dialog"
	"github.com/wmcon/wmcon/ui/machinesets"
)

// answers are what the user told the wizard so far, for the steps' requests (package setup/steps builds
// each step's request from them and the detection, as wmcon setup does from its flags).
func (w *wizardView) answers() steps.Answers {
	a := steps.Answers{Standalone: w.standalone}
	a.PayloadDir, a.PayloadImage = payloadOf(w.payload)
	return a
}

// stepChoices are the ways to take the step on screen, given what the detection found.
func (w *wizardView) stepChoices() []wizardChoice {
	if w.setup == nil {
		return nil
	}
	st := w.setup.Step(w.stepID())
	next := wizardChoice{label: "Continue", about: "this step is done", pick: func(w *wizardView) tea.Cmd {
		w.show(w.nextUndone(w.step))
		return w.onDone()
	}}
	switch w.stepID() {
	case event.SetupCheck:
		return w.checkChoices(st, next)
	case event.SetupOperator:
		return w.operatorChoices(st, next)
	case event.SetupKey:
		return w.keyChoices(st, next)
	case event.SetupMachines:
		return w.machinesChoices(st, next)
	case event.SetupConfigure:
		return w.configureChoices(st, next)
	case event.SetupWorkloads:
		return w.workloadsChoices(st, next)
	}
	return w.doneChoices()
}

func redetect(w *wizardView) tea.Cmd { w.phase = wizDetecting; return w.detect() }

func (w *wizardView) checkChoices(st event.SetupStep, next wizardChoice) []wizardChoice {
	if st.Blocking != "" {
		return []wizardChoice{{label: "Check again", about: "after fixing what fails (D opens the doctor with every check)", pick: redetect}}
	}
	if len(w.warnings) > 0 && !w.acked {
		return []wizardChoice{{label: "Acknowledge the warnings and go on", about: "they do not stop the setup, but read them first",
			pick: func(w *wizardView) tea.Cmd {
				w.acked = true
				w.show(w.nextUndone(w.step))
				return nil
			}}, {label: "Check again", pick: redetect}}
	}
	return []wizardChoice{next}
}

func (w *wizardView) operatorChoices(st event.SetupStep, next wizardChoice) []wizardChoice {
	install := wizardChoice{label: "Install WMCO through OLM",
		about: "the operator configures every Windows Machine and BYOH host into a node, and keeps them up to date",
		pick: func(w *wizardView) tea.Cmd {
			in := w.answers().OperatorInstall()
			return w.previewThen(in.WithPreview(), in)
		}}
	if st.Done {
		return []wizardChoice{next}
	}
	if st.Blocking != "" { // installing: follow it until the operator runs
		install.label = "Follow the install until the operator runs"
		return []wizardChoice{install, {label: "Check again", pick: redetect}}
	}
	standalone := wizardChoice{label: "Standalone: no operator",
		about: "wmcon configures each Windows host itself over SSH (wmcon configure); nothing is installed in the cluster",
		pick: func(w *wizardView) tea.Cmd {
			w.standalone = true
			return redetect(w)
		}}
	return []wizardChoice{install, standalone}
}

func (w *wizardView) keyChoices(st event.SetupStep, next wizardChoice) []wizardChoice {
	fromFile := wizardChoice{label: "Install a private key from a file",
		about: "an unencrypted RSA (2048 bits or more) or ed25519 key whose public half the hosts authorise",
		pick:  func(w *wizardView) tea.Cmd { return w.openForm(newKeyFileForm(w)) }}
	generate := wizardChoice{label: "Generate a new key pair",
		about: "written to a local file (0600, never overwriting) and installed; Windows hosts get its public key through the user data",
		pick:  func(w *wizardView) tea.Cmd { return w.openForm(newKeyGenerateForm(w)) }}
	if st.Done {
		next.label = "Use the existing " + "cloud-private-key"
		return []wizardChoice{next, fromFile, generate}
	}
	return []wizardChoice{generate, fromFile}
}

func (w *wizardView) machinesChoices(st event.SetupStep, next wizardChoice) []wizardChoice {
	machineSet := wizardChoice{label: "A Windows MachineSet",
		about: "the machine API creates Windows VMs on " + w.setup.Platform + " from an image you name; WMCO makes them nodes",
		pick:  func(w *wizardView) tea.Cmd { return w.openForm(newWizardMachineSetForm(w)) }}
	byoh := wizardChoice{label: "A Windows host you have (BYOH)",
		about: "an existing Windows Server reachable over SSH, added by address and user",
		pick:  func(w *wizardView) tea.Cmd { return w.openForm(newWizardBYOHForm(w)) }}
	var out []wizardChoice
	if st.Done {
		out = append(out, next)
		byoh.label, machineSet.label = "Add another BYOH host", "Add another Windows MachineSet"
	}
	if steps.MachineSetsFit(*w.setup) {
		out = append(out, machineSet)
	}
	return append(out, byoh)
}

func (w *wizardView) configureChoices(st event.SetupStep, next wizardChoice) []wizardChoice {
	if st.Done {
		return []wizardChoice{next}
	}
	if w.standalone {
		var out []wizardChoice
		for _, h := range steps.ConfigureHosts(*w.setup) {
			out = append(out, wizardChoice{label: "Configure " + h.Name + " (user " + h.User + ")",
				about: "wmcon inspects the host over SSH and shows its plan (directories, files, services) before it changes anything",
				pick:  func(w *wizardView) tea.Cmd { return w.openForm(newPayloadForm(w, h)) }})
		}
		return append(out, wizardChoice{label: "Check again", pick: redetect})
	}
	follow := w.answers().Follow(*w.setup)
	if len(follow.Targets()) == 0 {
		return []wizardChoice{{label: "Check again", about: "no Machine or BYOH host is waiting to become a node", pick: redetect}}
	}
	return []wizardChoice{{label: "Follow the operator", about: "Machine phases, CSRs, the operator's log lines about each, node events, until Ready",
		pick: func(w *wizardView) tea.Cmd { return w.planThen(steps.FollowPlan(follow), follow) }},
		{label: "Check again", pick: redetect}}
}

func (w *wizardView) workloadsChoices(st event.SetupStep, next wizardChoice) []wizardChoice {
	rc := w.answers().RuntimeClassEnsure(*w.setup)
	create := wizardChoice{label: "Create a RuntimeClass for Windows build " + cmp.Or(w.setup.Build, "?"),
		about: "pods that name it are scheduled onto Windows nodes of that build, tolerating their os=Windows taint",
		pick:  func(w *wizardView) tea.Cmd { return w.previewThen(rc.WithPreview(), rc) }}
	if !st.Done {
		if st.Blocking != "" {
			return []wizardChoice{{label: "Check again", pick: redetect}}
		}
		return []wizardChoice{create}
	}
	smoke := w.answers().SmokeTestPod(*w.setup)
	test := wizardChoice{label: "Run a smoke test pod on " + smoke.Node,
		about: "a small Windows pod with RuntimeClass " + w.setup.RuntimeClass + ", shown until Running, then removed",
		pick:  func(w *wizardView) tea.Cmd { return w.previewThen(smoke.WithPreview(), smoke) }}
	if w.smokeDone {
		return []wizardChoice{next, test}
	}
	next.label = "Go on without a smoke test"
	return []wizardChoice{test, next}
}

func (w *wizardView) doneChoices() []wizardChoice {
	summary := steps.Summary(*w.setup, w.files)
	return []wizardChoice{{label: "Write the summary to the audit log and finish",
		about: "the objects, files and nodes the setup made, in the action panel and the audit log",
		pick:  func(w *wizardView) tea.Cmd { return w.planThen(steps.SummaryPlan(), summary) }},
		{label: "Close the wizard", pick: func(w *wizardView) tea.Cmd { w.closed = true; return nil }}}
}

// The forms the wizard opens answer it (wizardFormMsg), not the root.

func (w *wizardView) form(title, intro string, fields []dialog.Field, build func([]string) (request.Request, error)) *dialog.FieldForm {
	f := dialog.NewFieldForm(w.ctx, title, intro, fields, build)
	f.Answer = func(req request.Request, ok bool) tea.Msg { return wizardFormMsg{owner: w, req: req, ok: ok} }
	return f
}

func newKeyFileForm(w *wizardView) *dialog.FieldForm {
	return w.form("Install a private key", "The key is checked first (passphrase-protected, weak and public keys are refused); its content is never shown.",
		[]dialog.Field{{Label: "private key file", Value: w.ctx.KeyFile, Placeholder: "/path/to/id_ed25519"}},
		func(v []string) (request.Request, error) {
			a := w.answers()
			if a.KeyFile = strings.TrimSpace(v[0]); a.KeyFile == "" {
				return nil, errors.New("give the path of a private key file")
			}
			req, _ := a.KeyInstall(*w.setup)
			return req, nil
		})
}

func newKeyGenerateForm(w *wizardView) *dialog.FieldForm {
	out := "wmcon-windows-key"
	if home, err := os.UserHomeDir(); err == nil {
		out = filepath.Join(home, ".ssh", "wmcon-windows")
	}
	return w.form("Generate a key pair", "The private key is written to the file (0600) and its public key beside it (.pub); an existing file is never overwritten.",
		[]dialog.Field{{Label: "private key file", Value: out}, {Label: "type", Value: "ed25519", Placeholder: "ed25519 or rsa"}},
		func(v []string) (request.Request, error) {
			path, kind := strings.TrimSpace(v[0]), strings.TrimSpace(v[1])
			switch {
			case path == "":
				return nil, errors.New("give the file the private key goes to")
			case kind != "ed25519" && kind != "rsa":
				return nil, fmt.Errorf("type %q: use ed25519 or rsa", kind)
			}
			a := w.answers()
			a.GenerateKey, a.KeyOut, a.KeyType = true, path, kind
			req, _ := a.KeyInstall(*w.setup)
			return req, nil
		})
}

// newPayloadForm asks where the files a standalone host gets come from: WMCO's payload, as a directory or an
// image; empty takes the installed operator's image (or the demo's payload).
func newPayloadForm(w *wizardView, h event.SetupHost) *dialog.FieldForm {
	return w.form("Configure "+h.Address, "wmcon installs WMCO's payload (kubelet, containerd, hybrid-overlay, ...) on the host: give a "+
		"directory laid out like WMCO's /payload or an image holding one. Empty: the installed operator's image.",
		[]dialog.Field{payloadField(w)},
		func(v []string) (request.Request, error) {
			if err := w.setPayload(v[0]); err != nil {
				return nil, err
			}
			return w.answers().Configure(h), nil
		})
}

func newWizardMachineSetForm(w *wizardView) *dialog.FieldForm {
	f := machinesets.NewMachineSetForm(w.ctx)
	f.Answer = func(req request.Request, ok bool) tea.Msg { return wizardFormMsg{owner: w, req: req, ok: ok} }
	return f
}

// newWizardBYOHForm asks for a host's address and user, offering a host the console knows is waiting; in
// standalone mode also for the payload wmcon will install (the dry run that tries the host needs it too).
func newWizardBYOHForm(w *wizardView) *dialog.FieldForm {
	addr := ""
	for _, h := range w.ctx.Hosts {
		if !w.knownHost(h) {
			addr = h
			break
		}
	}
	fields := []dialog.Field{{Label: "address", Value: addr, Placeholder: "IPv4 address or DNS name"}, {Label: "user", Value: "Administrator"}}
	if w.standalone {
		fields = append(fields, payloadField(w))
	}
	return w.form("New BYOH host", "The host is checked (an IPv4 address or a name resolving to one) and tried with a dry run of "+
		"wmcon configure (SSH, then what configuring it needs) before anything is added.", fields,
		func(v []string) (request.Request, error) {
			req, err := machinesets.BYOHRequest(v[0], v[1])
			if err != nil {
				return nil, err
			}
			if w.standalone {
				if err := w.setPayload(v[2]); err != nil {
					return nil, err
				}
			}
			return req, nil
		})
}

func payloadField(w *wizardView) dialog.Field {
	return dialog.Field{Label: "payload", Value: w.payload, Placeholder: "/path/to/payload or registry/image:tag (empty: the operator's)"}
}

// payloadOf reads a payload as a form gives it: a directory (starting with / or .) or an image reference.
func payloadOf(p string) (dir, image string) {
	switch {
	case p == "":
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, "."):
		return p, ""
	default:
		return "", p
	}
	return "", ""
}

// setPayload records the payload given in a form: a directory (checked) or an image reference.
func (w *wizardView) setPayload(v string) error {
	p := strings.TrimSpace(v)
	if dir, _ := payloadOf(p); dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("%s is not a directory: give WMCO's payload directory, or an image reference", dir)
		}
	}
	w.payload = p
	return nil
}

// knownHost: the address is a BYOH entry or a Windows node's address already.
func (w *wizardView) knownHost(addr string) bool {
	for _, h := range w.setup.Hosts {
		if h.Address == addr || h.Name == addr {
			return true
		}
	}
	for _, n := range w.setup.Nodes {
		if n.Address == addr {
			return true
		}
	}
	return false
}
