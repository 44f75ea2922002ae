package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/session"
)

// addSSHFlags binds the flags that say how to reach Windows hosts.
func addSSHFlags(fs *pflag.FlagSet, o *session.SSHOptions) {
	fs.StringArrayVar(&o.Keys, "ssh-key", nil, "private key file for Windows hosts (default: the cluster's cloud-private-key secret)")
	fs.StringVar(&o.User, "ssh-user", "", "user on Windows hosts (default Administrator, capi on Azure, windows-instances for BYOH)")
	fs.StringVar(&o.Bastion, "ssh-bastion", "", "jump host(s) in ProxyJump form, e.g. core@bastion.example.com (default: a run=ssh-bastion Service, if any)")
	fs.StringVar(&o.SSHConfig, "ssh-config", "~/.ssh/config", "ssh_config file for node addresses and jump hosts (\"\" for none)")
	fs.StringVar(&o.KnownHosts, "known-hosts", "", "local pins used when the cluster cannot store host keys (default ~/.config/wmcon/known_hosts)")
	o.Agent = true
	agent := fs.VarPF(agentFlag{o}, "ssh-agent", "", "also offer the keys of the ssh-agent at $SSH_AUTH_SOCK when there is one (given explicitly, a missing agent is an error)")
	agent.NoOptDefVal = "true"
	fs.StringVar(&o.PassphraseEnv, "ssh-passphrase-env", remote.PassphraseEnv, "environment variable holding the passphrase of an encrypted key")
}

// openSession builds the session every command and the console use, from the global flags.
func (g *globalOptions) openSession(ctx context.Context) (*session.Session, error) {
	b, err := g.openBackend()
	if err != nil {
		return nil, err
	}
	return session.New(ctx, session.Options{Version: Version, Backend: b, SSH: g.ssh, ReadOnly: g.readOnly, AuditLog: g.auditLog,
		KeyTrustedOnce: func(host, fp string) {
			fmt.Fprintf(g.stderr, "wmcon: --read-only: trusting the host key of %s (%s) for this session only; it is not pinned\n", host, fp)
		}})
}

// agentFlag is --ssh-agent. The agent is used by default when there is one; only a user who asks for it
// explicitly needs it to be there (cron, CI and systemd have no SSH_AUTH_SOCK).
type agentFlag struct{ o *session.SSHOptions }

func (a agentFlag) Set(v string) error {
	on, err := strconv.ParseBool(v)
	if err != nil {
		return err
	}
	a.o.Agent, a.o.AgentRequired = on, on
	return nil
}

func (a agentFlag) String() string { return strconv.FormatBool(a.o.Agent) }
func (a agentFlag) Type() string   { return "bool" }

// demoFlag is --demo: a bare --demo (or --demo=true) is the demo cluster, --demo=fresh the one where Windows
// was never set up, --demo=false none.
type demoFlag struct{ g *globalOptions }

func (d demoFlag) Set(v string) error {
	switch v {
	case "fresh":
		d.g.demo, d.g.fresh = true, true
		return nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%q is not a demo: give --demo, or --demo=fresh for a cluster without Windows nodes", v)
	}
	d.g.demo, d.g.fresh = on, false
	return nil
}

func (d demoFlag) String() string {
	switch {
	case d.g.fresh:
		return "fresh"
	case d.g.demo:
		return "true"
	}
	return "false"
}

func (d demoFlag) Type() string { return "string" }
