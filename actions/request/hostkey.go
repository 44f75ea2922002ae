package request

// ActionHostKeyForget names forgetting a pinned host key, as its Events and audit records do.
const ActionHostKeyForget = "hostkey-forget"

// HostKeyForget forgets the SSH host key pinned for a node's host at Address (on the Node, in the
// windows-ssh-host-keys ConfigMap, or locally), so the next connection pins the key the host presents:
// after a host was deliberately reinstalled.
type HostKeyForget struct {
	Node    string
	Address string // host:port, as wmcon connects to it
}

func (r HostKeyForget) Action() string    { return ActionHostKeyForget }
func (r HostKeyForget) Targets() []string { return []string{r.Node} }
func (r HostKeyForget) Title() string     { return "forget the host key of " + r.Node }
func (r HostKeyForget) Audit() Audit      { return changes("address " + r.Address) }
