package event

// The keys of the actions' questions' choices (Choice.Key), in one place: headless commands answer with
// them up front (--yes, --on-pdb), the console's tests pick them, and an action's question offers them.
const (
	ChoiceApply  = "apply"  // apply a shown plan: configure a host, create or replace a MachineSet
	ChoiceCancel = "cancel" // decline: nothing changes

	// A PodDisruptionBudget blocks a drain.
	ChoiceWait            = "wait"
	ChoiceAbort           = "abort"
	ChoiceDisableEviction = "disable-eviction"

	// The operator's install and uninstall.
	ChoiceApprove   = "approve" // a Manual InstallPlan
	ChoiceLeave     = "leave"   // leave a Manual InstallPlan waiting
	ChoiceUninstall = "uninstall"
	ChoiceKeep      = "keep"

	ChoiceReplace = "replace" // replace cloud-private-key with a different key
	ChoiceRemove  = "remove"  // remove a BYOH host, delete a MachineSet

	// The reboot a proxy sync offers.
	ChoiceLater  = "later"
	ChoiceReboot = "reboot"

	ChoiceUpgrade = "upgrade" // upgrade the planned nodes
	ChoiceFollow  = "follow"  // follow the operator's own upgrades
)
