// Command wmcon is a terminal console for the Windows worker nodes of OpenShift/OKD clusters.
package main

import (
	"os"

	"github.com/wmcon/wmcon/cli"
	"github.com/wmcon/wmcon/sim/demo"
)

// main is the one place the product meets the simulators: it hands the command line the demo cluster
// (sim/demo) that --demo opens. Nothing else in the product imports sim/ (layering_test.go checks it).
func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr, demo.Launcher{}))
}
