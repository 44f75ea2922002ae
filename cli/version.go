package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newVersionCommand(g *globalOptions) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print wmcon's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkReportFormat(format); err != nil {
				return err
			}
			v := currentVersion()
			if format == "json" {
				return writeJSON(g.stdout, v)
			}
			_, err := fmt.Fprintf(g.stdout, "wmcon %s (%s, %s)\n", v.Version, v.GoVersion, v.Platform)
			return err
		},
	}
	addReportFormat(cmd.Flags(), &format)
	return cmd
}
