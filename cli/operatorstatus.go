package cli

import (
	"fmt"
	"io"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
)

// operatorReport is wmcon operator status -o json: one object saying what OLM says about WMCO. An object
// that is not there is null; installed is true only when the CSV succeeded.
type operatorReport struct {
	Installed     bool                 `json:"installed"`
	Version       string               `json:"version,omitempty"` // the CSV's
	Summary       string               `json:"summary"`
	Namespace     operatorNamespace    `json:"namespace"`
	OperatorGroup *operatorGroupReport `json:"operatorGroup"`
	Subscription  *subscriptionReport  `json:"subscription"`
	InstallPlan   *installPlanReport   `json:"installPlan"`
	CSV           *csvReport           `json:"csv"`
	Deployment    *deploymentReport    `json:"deployment"`
	Pods          []operatorPodReport  `json:"pods"`
	Log           []string             `json:"log"`                // the running pod's last lines
	LogError      string               `json:"logError,omitempty"` // why they could not be read
}

type operatorNamespace struct {
	Name    string `json:"name"`
	Present bool   `json:"present"`
}

type operatorGroupReport struct {
	Name             string   `json:"name"`
	TargetNamespaces []string `json:"targetNamespaces"`
}

type subscriptionReport struct {
	Name            string `json:"name"`
	Source          string `json:"source"`
	SourceNamespace string `json:"sourceNamespace"`
	Channel         string `json:"channel"`
	Approval        string `json:"approval"`
	State           string `json:"state"`
	InstalledCSV    string `json:"installedCSV,omitempty"`
}

type installPlanReport struct {
	Name     string `json:"name"`
	Phase    string `json:"phase"`
	Approved bool   `json:"approved"`
}

type csvReport struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Phase   string `json:"phase"`
	Message string `json:"message,omitempty"`
}

type deploymentReport struct {
	Name      string `json:"name"`
	Available bool   `json:"available"`
}

type operatorPodReport struct {
	Name     string `json:"name"`
	Phase    string `json:"phase"`
	Ready    bool   `json:"ready"`
	Restarts int32  `json:"restarts"`
	LastExit string `json:"lastExit,omitempty"`
}

func newOperatorReport(st cluster.OperatorState) operatorReport {
	r := operatorReport{Installed: st.Installed(), Summary: st.Summary(),
		Namespace: operatorNamespace{Name: config.OperatorNamespace, Present: st.Namespace},
		Pods:      []operatorPodReport{}, Log: st.Log, LogError: st.LogErr}
	if r.Log == nil {
		r.Log = []string{}
	}
	if g := st.OperatorGroup; g != nil {
		r.OperatorGroup = &operatorGroupReport{Name: g.Name, TargetNamespaces: g.Spec.TargetNamespaces}
	}
	if s := st.Subscription; s != nil {
		r.Subscription = &subscriptionReport{Name: s.Name, State: string(s.Status.State), InstalledCSV: s.Status.InstalledCSV}
		if s.Spec != nil {
			r.Subscription.Source, r.Subscription.SourceNamespace = s.Spec.CatalogSource, s.Spec.CatalogSourceNamespace
			r.Subscription.Channel, r.Subscription.Approval = s.Spec.Channel, string(s.Spec.InstallPlanApproval)
		}
	}
	if p := st.InstallPlan; p != nil {
		r.InstallPlan = &installPlanReport{Name: p.Name, Phase: string(p.Status.Phase), Approved: p.Spec.Approved}
	}
	if c := st.CSV; c != nil {
		r.CSV = &csvReport{Name: c.Name, Version: c.Spec.Version.String(), Phase: string(c.Status.Phase), Message: c.Status.Message}
		if r.Installed {
			r.Version = r.CSV.Version
		}
	}
	if d := st.Deployment; d != nil {
		r.Deployment = &deploymentReport{Name: d.Name, Available: st.DeploymentAvailable()}
	}
	for _, p := range st.Pods {
		r.Pods = append(r.Pods, operatorPodReport{Name: p.Name, Phase: p.Phase, Ready: p.Ready, Restarts: p.Restarts, LastExit: p.LastExit})
	}
	return r
}

// statusLines keeps what operator status reports as text: its summary (the finished event's message) and
// one line per object (its log events); a failure is left to the error the action returns.
type statusLines struct {
	summary string
	lines   []string
}

func (s *statusLines) sink() event.Sink {
	return event.EmitFunc(func(e event.Event) {
		switch e.Kind {
		case event.StepLog:
			s.lines = append(s.lines, e.Message)
		case event.Finished:
			s.summary = e.Message
		}
	})
}

// write prints the summary, then the objects indented under it.
func (s *statusLines) write(w io.Writer) error {
	if _, err := fmt.Fprintln(w, s.summary); err != nil {
		return err
	}
	for _, l := range s.lines {
		if _, err := fmt.Fprintln(w, "  "+l); err != nil {
			return err
		}
	}
	return nil
}
