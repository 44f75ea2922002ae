package config

import "time"

// The graceful reboot's waits unless the user says otherwise, in one place: the reboot request (and so its
// audit record, the console and wmcon reboot's flags) and the SSH reboot in package remote take them from
// here.
const (
	RebootDownTimeout  = 5 * time.Minute  // for the host to stop answering after Restart-Computer
	RebootUpTimeout    = 15 * time.Minute // for SSH to answer again once down
	RebootReadyTimeout = 10 * time.Minute // for the kubelet to run and the node to be Ready once SSH is back
)
