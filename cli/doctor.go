package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wmcon/wmcon/actions/diagnosis"
)

func newDoctorCommand(g *globalOptions) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the cluster's prerequisites for Windows nodes, each finding with what to do",
		Long: "doctor checks, all at once: that the API server answers; your permissions for what wmcon does (grouped\n" +
			"by what they enable); the Kubernetes version against WMCO's supported window and the Windows Server\n" +
			"releases the cluster can take; the network (OVNKubernetes, hybrid overlay, the VXLAN port, class E and\n" +
			"overlapping ranges); the platform (MachineSets or BYOH only); the cluster-wide proxy; mirror sets and the\n" +
			"pause image's mirror; WMCO's install through OLM; cloud-private-key and the key in windows-user-data.\n" +
			"On plain Kubernetes the OpenShift-only checks say so (unknown). It changes nothing.\n\n" +
			"Exit code 0 when no check fails, 1 when one does.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return usageErrorf("--output %q: use text or json", format)
			}
			s, err := g.openSession(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			r, err := s.Doctor(cmd.Context(), nil)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if format == "json" {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				if err := enc.Encode(r); err != nil {
					return err
				}
			} else {
				writeReport(w, r, g.readOnly)
			}
			if !r.Healthy() {
				return &exitError{code: ExitFailed, err: fmt.Errorf("%d failing %s: fix them first (each says what to do)",
					r.Count(diagnosis.CheckFail), map[bool]string{true: "check", false: "checks"}[r.Count(diagnosis.CheckFail) == 1])}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output format: text, or json for the report as one JSON object")
	return cmd
}
