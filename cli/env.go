package cli

import (
	"context"

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
	fs.BoolVar(&o.Agent, "ssh-agent", true, "also offer the keys of the ssh-agent at $SSH_AUTH_SOCK")
	fs.StringVar(&o.PassphraseEnv, "ssh-passphrase-env", remote.PassphraseEnv, "environment variable holding the passphrase of an encrypted key")
}

// openSession builds the session every command and the console use, from the global flags.
func (g *globalOptions) openSession(ctx context.Context) (*session.Session, error) {
	return session.New(ctx, session.Options{Demo: g.demo, Kube: g.kube, SSH: g.ssh})
}
