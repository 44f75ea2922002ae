package nodeconfig

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/nodeconfig/contract"
)

// Services turns the contract into the services the engine installs on one host: each command line resolved
// as WMCO's node daemon resolves it, with the Node as it will register (its name) and the outputs of the
// pre-scripts run on the host (h.PreScriptOutputs, hoststep.Values). Where the contract's command relies on a host-side step wmcon does not perform yet,
// the engine runs the command it ran before that step existed: see awaitingHostStep, the one place the engine
// departs from the contract.
func Services(f Facts, h Host) ([]Service, error) {
	data, err := f.ServicesContract()
	if err != nil {
		return nil, err
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: h.NodeName}}
	out := make([]Service, 0, len(data.Services))
	for _, cs := range data.Services {
		cmd, err := contract.Resolve(cs, node, h.PreScriptOutputs[cs.Name])
		if err != nil {
			return nil, err
		}
		s := Service{Name: cs.Name, BinPath: cmd, DependsOn: append([]string(nil), cs.Dependencies...),
			StartOrder: int(cs.Priority), Description: ManagedTag + " " + cs.Name, AfterJoin: !cs.Bootstrap}
		for _, p := range cs.PowershellPreScripts {
			if p.VariableName == "" {
				s.PreScripts = append(s.PreScripts, p.Path)
			}
		}
		if pending, ok := awaitingHostStep[cs.Name]; ok && (pending.done == nil || !pending.done(f)) {
			s.BinPath, s.Pending = pending.command(cs, cmd, f, h), pending.step
		}
		out = append(out, s)
	}
	return out, nil
}

// ServicesContract is the contract the host's services follow: WMCO's, read from the cluster, when it is
// installed (f.Contract), otherwise wmcon's own for the cluster's facts.
func (f Facts) ServicesContract() (contract.Data, error) {
	if f.Contract != nil {
		return *f.Contract, nil
	}
	return Contract(f.ContractInputs())
}

// hostStep is a host-side step of WMCO's that wmcon does not perform yet, and the command line the engine
// runs meanwhile.
type hostStep struct {
	step    string
	command func(cs contract.Service, resolved string, f Facts, h Host) string
	// done, when set, says the configuration performs the step for these facts after all.
	done func(f Facts) bool
}

// awaitingHostStep are the services whose contract command line needs a host-side step wmcon does not
// perform yet (their pre-scripts, which wmcon does not run, or files it does not write). Remove an entry
// once wmcon performs the step; the contract itself (Contract, wmcon configure --render-services) is
// WMCO's either way. Empty: every service runs the contract's command line (a difference that must stay
// goes into testdata/wmco-11/allowlist.yaml with its reason instead).
var awaitingHostStep = map[string]hostStep{}

// PendingHostSteps names, per service, the host-side step of WMCO's that wmcon does not perform yet.
func PendingHostSteps() map[string]string {
	out := make(map[string]string, len(awaitingHostStep))
	for name, s := range awaitingHostStep {
		out[name] = s.step
	}
	return out
}
