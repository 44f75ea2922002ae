package request

// Requests the console's Operator view runs outside the guided setup (OperatorInstall and KeyInstall are the
// setup's own, reused there):
//
//	OperatorStatus     what OLM says about WMCO, one log line per object; changes nothing
//	OperatorUninstall  delete WMCO's Subscription and CSV (question: confirm); Windows nodes stay
//	KeyShow            cloud-private-key and the key in windows-user-data, by type and fingerprint; changes nothing
const (
	ActionOperatorStatus    = "operator-status"
	ActionOperatorUninstall = "operator-uninstall"
	ActionKeyShow           = "key-show"
)

// OperatorStatus reports WMCO's namespace, OperatorGroup, Subscription, InstallPlan, CSV and Deployment.
type OperatorStatus struct{}

func (OperatorStatus) Action() string    { return ActionOperatorStatus }
func (OperatorStatus) Targets() []string { return []string{"windows-machine-config-operator"} }
func (OperatorStatus) Title() string     { return "WMCO status" }
func (OperatorStatus) Audit() Audit      { return readsOnly }

// OperatorUninstall deletes WMCO's Subscription and CSV after a Question; nodes, secrets and the namespace stay.
type OperatorUninstall struct{}

func (OperatorUninstall) Action() string    { return ActionOperatorUninstall }
func (OperatorUninstall) Targets() []string { return []string{"windows-machine-config-operator"} }
func (OperatorUninstall) Title() string     { return "uninstall WMCO" }
func (OperatorUninstall) Audit() Audit      { return changes("") }

// KeyShow describes cloud-private-key and windows-user-data's key; key material never leaves the cluster.
type KeyShow struct{}

func (KeyShow) Action() string    { return ActionKeyShow }
func (KeyShow) Targets() []string { return []string{"cloud-private-key"} }
func (KeyShow) Title() string     { return "the SSH key" }
func (KeyShow) Audit() Audit      { return readsOnly }
