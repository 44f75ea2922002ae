package cli

import (
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/session"
)

// An agent is offered by default but required only when the user asked for it, so a missing SSH_AUTH_SOCK
// (cron, CI, systemd) does not break commands that were given a key file.
func TestSSHAgentRequiredOnlyWhenAskedFor(t *testing.T) {
	for _, tc := range []struct {
		args               []string
		agent, agentNeeded bool
	}{
		{nil, true, false},
		{[]string{"--ssh-agent"}, true, true},
		{[]string{"--ssh-agent=true"}, true, true},
		{[]string{"--ssh-agent=false"}, false, false},
	} {
		var o session.SSHOptions
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		addSSHFlags(fs, &o)
		require.NoError(t, fs.Parse(tc.args))
		require.Equal(t, tc.agent, o.Agent, "%v", tc.args)
		require.Equal(t, tc.agentNeeded, o.AgentRequired, "%v", tc.args)
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	addSSHFlags(fs, &session.SSHOptions{})
	require.Error(t, fs.Parse([]string{"--ssh-agent=maybe"}))
}
