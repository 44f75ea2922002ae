// Package all links every action into the Runner. Each feature package registers the handlers of its
// request types with actions.Register from an init function, so the handler of a request exists only in a
// program that imports its package; a program that runs requests imports this one (session does), and
// then every request type in package request has its handler (all_test.go holds it to that). The doctor,
// triage and logs take no request (the session calls them and they change nothing), so they are not here.
package all

import (
	_ "github.com/wmcon/wmcon/actions/configure" // configure, deconfigure
	_ "github.com/wmcon/wmcon/actions/hostkey"   // hostkey forget
	_ "github.com/wmcon/wmcon/actions/mirrors"   // mirrors apply
	_ "github.com/wmcon/wmcon/actions/nodeops"   // cordon, uncordon, drain
	_ "github.com/wmcon/wmcon/actions/operator"  // operator status and uninstall, key show
	_ "github.com/wmcon/wmcon/actions/proxy"     // proxy sync
	_ "github.com/wmcon/wmcon/actions/reboot"    // reboot
	_ "github.com/wmcon/wmcon/actions/restart"   // restart-service
	_ "github.com/wmcon/wmcon/actions/setup"     // the guided setup's requests, MachineSets, BYOH hosts
	_ "github.com/wmcon/wmcon/actions/upgrade"   // upgrade
)
