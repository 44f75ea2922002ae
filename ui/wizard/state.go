package wizard

import (
	"github.com/wmcon/wmcon/actions/event"
)

// State is where the wizard stands, for the console's tests, which drive it through the root model and
// read it from the view stack (as a view exposing State).
type State struct {
	Step       event.SetupStepID
	Phase      string   // detecting, choose, form, previewing, plan or running
	Choices    []string // the labels of the step's choices
	Files      []string // the key files a key step generated
	SmokeDone  bool     // the smoke test passed in this session
	Standalone bool     // standalone mode was chosen or detected
	Problem    string   // why the last preview or run did not get the step done
}

// State is the wizard's state now.
func (w *wizardView) State() State {
	s := State{Step: w.stepID(), Phase: phaseNames[w.phase], Files: w.files, SmokeDone: w.smokeDone,
		Standalone: w.standalone, Problem: w.problem}
	for _, c := range w.choices {
		s.Choices = append(s.Choices, c.label)
	}
	return s
}

var phaseNames = map[wizardPhase]string{wizDetecting: "detecting", wizChoose: "choose", wizForm: "form",
	wizPreviewing: "previewing", wizPlan: "plan", wizRunning: "running"}

// StepIndex is the place of a step in steps.All; StepName its short name in the step list.
func StepIndex(id event.SetupStepID) int   { return stepIndex(id) }
func StepName(id event.SetupStepID) string { return wizardStepNames[id] }
