package event

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanAndSetupStateTravelAsTextAndJSON(t *testing.T) {
	plan := Event{Action: "runtimeclass", Target: "windows", Kind: PlanShown, Message: "RuntimeClass windows",
		Plan: &Plan{Title: "RuntimeClass windows", Summary: []string{"create it"}, YAML: "kind: RuntimeClass\n", Commands: []string{"oc apply -f -"}}}
	var buf bytes.Buffer
	(&TextSink{W: &buf}).Emit(plan)
	assert.Contains(t, buf.String(), "\n  plan: RuntimeClass windows\n    create it\n    | kind: RuntimeClass\n    $ oc apply -f -")

	state := Event{Kind: SetupState, Setup: &Setup{Next: SetupKey, Steps: []SetupStep{
		{ID: SetupCheck, Title: "Check", Done: true}, {ID: SetupKey, Title: "Key", Hint: "run wmcon setup --key FILE"}}}}
	buf.Reset()
	(&TextSink{W: &buf}).Emit(state)
	assert.Contains(t, buf.String(), "✓ check     Check")
	assert.Contains(t, buf.String(), "→ key       Key\n      next: run wmcon setup --key FILE")

	buf.Reset()
	(&TextSink{W: &buf, JSON: true}).Emit(state)
	var back Event
	require.NoError(t, json.Unmarshal(buf.Bytes(), &back))
	assert.Equal(t, state.Setup, back.Setup)
	assert.Equal(t, SetupKey, back.Setup.Step(SetupKey).ID)
}
