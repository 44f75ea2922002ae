package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/session"
)

func newTopCommand(g *globalOptions) *cobra.Command {
	var (
		format string
		opts   session.MetricsOptions
	)
	cmd := &cobra.Command{
		Use:   "top [NODE...]",
		Short: "Show CPU, memory, disk and network use of Windows nodes, like oc adm top nodes",
		Long: "top prints each Windows node's CPU %, memory used %, its fullest volume's free space and its network\n" +
			"throughput, and names where the numbers come from. With --prometheus URL they are PromQL queries of\n" +
			"that Prometheus (or Thanos querier) over the windows_exporter series; without it, on OpenShift, of the\n" +
			"cluster's openshift-monitoring/thanos-querier through the API server's service proxy; otherwise wmcon reads each node's\n" +
			"windows_exporter (port 9182) through the API server's node proxy twice, --interval apart, since CPU\n" +
			"and network figures are rates. Nodes without metrics are listed with the reason.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usageErrorf("--output %q: use text or json", format)
			}
			if opts.Interval < 100*time.Millisecond || opts.Interval > time.Minute {
				return usageErrorf("--interval %s: use 100ms to 1m", opts.Interval)
			}
			s, err := g.openSession(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			r, err := s.NodeMetrics(cmd.Context(), args, opts)
			if err != nil {
				return err
			}
			if format == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(r)
			}
			writeTop(cmd.OutOrStdout(), r)
			return nil
		},
	}
	cmd.AddCommand(newTopPodsCommand(g))
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output format: text, or json for the report as one JSON object")
	cmd.Flags().StringVar(&opts.PrometheusURL, "prometheus", "", "URL of a Prometheus or Thanos querier that scrapes the nodes' windows_exporter")
	cmd.Flags().DurationVar(&opts.Interval, "interval", 2*time.Second, "time between the two reads of each exporter (CPU and network are rates)")
	return cmd
}

// writeTop prints the report as a table; unknown figures are "-". No metrics at all is said once, with
// why, rather than as an error.
func writeTop(w io.Writer, r model.MetricsReport) {
	fmt.Fprintf(w, "metrics: %s (%s)\n", r.Source, r.Why)
	if len(r.Nodes) == 0 {
		fmt.Fprintln(w, "no metrics: no node's windows_exporter could be read; the reasons follow. Check that the windows_exporter service runs (wmcon triage NODE) or pass --prometheus URL.")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tCPU%\tMEMORY%\tMEMORY\tVOLUME\tFREE\tFREE%\tNET IN\tNET OUT")
		for _, m := range r.Nodes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Node, percent(m.CPUPercent), percent(m.MemoryUsedPercent),
				bytesText(m.MemoryTotalBytes, ""), dash(m.Volume), bytesText(m.VolumeFreeBytes, ""), percent(m.VolumeFreePercent),
				bytesText(m.NetRxBytesPerSec, "/s"), bytesText(m.NetTxBytesPerSec, "/s"))
		}
		tw.Flush()
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "%s: no metrics: %s\n", e.Node, e.Error)
	}
}

func percent(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", *v)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// bytesText is a binary-prefixed size like oc adm top's (Mi, Gi).
func bytesText(v *float64, suffix string) string {
	if v == nil {
		return "-"
	}
	x := *v
	for _, unit := range []string{"B", "Ki", "Mi", "Gi", "Ti"} {
		if x < 1024 || unit == "Ti" {
			if unit == "B" {
				return fmt.Sprintf("%.0fB%s", x, suffix)
			}
			return fmt.Sprintf("%.1f%s%s", x, unit, suffix)
		}
		x /= 1024
	}
	return ""
}
