package operator

import (
	"context"
	"fmt"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
)

// The Operator view's requests, run by the Runner like every action (the uninstall audited).
func init() {
	actions.Register(func(ctx context.Context, b actions.Backends, _ request.OperatorStatus, sink event.Sink) error {
		s, err := b.GuidedSetup()
		if err != nil {
			return event.Reporter{Sink: sink, Action: request.ActionOperatorStatus, Target: config.OperatorName}.Fail("state", err, "")
		}
		_, err = OperatorStatus(ctx, s.OLM, sink)
		return err
	})
	actions.Register(func(ctx context.Context, b actions.Backends, _ request.OperatorUninstall, sink event.Sink) error {
		s, err := b.GuidedSetup()
		if err != nil {
			return event.Reporter{Sink: sink, Action: request.ActionOperatorUninstall, Target: config.OperatorName}.Fail("uninstall", err, "")
		}
		return UninstallOperator(ctx, s.OLM, sink)
	})
	actions.Register(runKeyShow)
}

func runKeyShow(ctx context.Context, b actions.Backends, _ request.KeyShow, sink event.Sink) error {
	r := event.Reporter{Sink: sink, Action: request.ActionKeyShow, Target: config.PrivateKeySecret}
	s, err := b.GuidedSetup()
	if err != nil {
		return r.Fail("key", err, "")
	}
	st, err := s.Keys.State(ctx)
	if err != nil {
		return r.Fail("key", err, "check your access to secrets in "+config.OperatorNamespace+" and "+config.MachineAPINamespace)
	}
	lines := KeyStateLines(st)
	for _, l := range lines {
		r.Log("key", l)
	}
	r.Finish(event.Succeeded, lines[0], "")
	return nil
}

// KeyStateLines describe cloud-private-key and the key windows-user-data authorizes, never the key itself:
// the first line the private key, the second the user data.
func KeyStateLines(st cluster.KeyState) []string {
	var key, ud string
	if st.Key == nil {
		key = fmt.Sprintf("%s: missing in %s (create it with wmcon key create --from-file PATH or wmcon key generate --out PATH)", config.PrivateKeySecret, config.OperatorNamespace)
	} else {
		key = fmt.Sprintf("%s: %s %d bits %s", config.PrivateKeySecret, st.Key.Type, st.Key.Bits, st.Key.Fingerprint)
		if st.KeyProblem != "" {
			key += " — problem: " + st.KeyProblem
		}
	}
	switch {
	case st.UserDataKey == nil:
		ud = fmt.Sprintf("%s: missing in %s", config.UserDataSecret, config.MachineAPINamespace)
	case st.UserDataErr != "":
		ud = fmt.Sprintf("%s: %s", config.UserDataSecret, st.UserDataErr)
	default:
		match := "does not match " + config.PrivateKeySecret
		if st.Key != nil && st.Key.Fingerprint == st.UserDataKey.Fingerprint {
			match = "matches " + config.PrivateKeySecret
		}
		ud = fmt.Sprintf("%s: %s %s (%s)", config.UserDataSecret, st.UserDataKey.Type, st.UserDataKey.Fingerprint, match)
	}
	return []string{key, ud}
}
