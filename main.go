// Command wmcon is a terminal console for the Windows worker nodes of OpenShift/OKD clusters.
package main

import (
	"os"

	"github.com/wmcon/wmcon/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
