package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/session"
)

// topPodsOptions are `wmcon top pods`' flags besides the global -n.
type topPodsOptions struct {
	all        bool
	containers bool
	sortBy     string
	format     string
	metrics    session.PodMetricsOptions
}

func newTopPodsCommand(g *globalOptions) *cobra.Command {
	var o topPodsOptions
	cmd := &cobra.Command{
		Use:   "pods",
		Short: "Show CPU and memory use of the pods on Windows nodes, like oc adm top pods",
		Long: "top pods prints the CPU (millicores) and memory (working set, MiB) of the running pods on Windows\n" +
			"nodes, with oc adm top pods' columns, and names where the numbers come from. The cluster's metrics\n" +
			"pipeline has none for these pods (Windows nodes run no cAdvisor), so wmcon reads, best first: each\n" +
			"node's kubelet summary API through the API server's node proxy (needs get nodes/proxy); where that is\n" +
			"forbidden, the cluster's thanos-querier (windows_exporter's container collector); otherwise each\n" +
			"host's windows_exporter over SSH. --prometheus URL asks that Prometheus instead.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.check(cmd); err != nil {
				return err
			}
			o.metrics.Namespace = g.podNamespace(cmd, o.all)
			s, err := g.openSession(cmd.Context())
			if err != nil {
				return err
			}
			defer s.Close()
			r, err := s.PodMetrics(cmd.Context(), o.metrics)
			if err != nil {
				return err
			}
			sortPodMetrics(r.Pods, o.sortBy)
			if o.format == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(r)
			}
			writeTopPods(cmd.OutOrStdout(), r, o.metrics.Namespace, o.containers)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.metrics.Node, "node", "", "only the pods of this Windows node")
	f.BoolVarP(&o.all, "all-namespaces", "A", false, "the pods of every namespace (default: -n, or the kubeconfig context's namespace)")
	f.BoolVar(&o.containers, "containers", false, "one line per container")
	f.StringVar(&o.sortBy, "sort-by", "", "sort by cpu or memory, largest first")
	f.StringVarP(&o.format, "output", "o", "text", "output format: text, or json for the report as one JSON object")
	f.StringVar(&o.metrics.PrometheusURL, "prometheus", "", "URL of a Prometheus or Thanos querier that scrapes the nodes' windows_exporter")
	f.DurationVar(&o.metrics.Interval, "interval", 2*time.Second, "time between two reads when CPU is a counter (the exporter's)")
	_ = cmd.RegisterFlagCompletionFunc("node", g.completeNodes)
	fixed(cmd, "sort-by", "cpu", "memory")
	fixed(cmd, "output", "text", "json")
	return cmd
}

// check refuses contradictory or unknown flag values.
func (o *topPodsOptions) check(cmd *cobra.Command) error {
	if o.format != "text" && o.format != "json" {
		return usageErrorf("--output %q: use text or json", o.format)
	}
	if o.sortBy != "" && o.sortBy != "cpu" && o.sortBy != "memory" {
		return usageErrorf("--sort-by %q: use cpu or memory", o.sortBy)
	}
	if o.metrics.Interval < 100*time.Millisecond || o.metrics.Interval > time.Minute {
		return usageErrorf("--interval %s: use 100ms to 1m", o.metrics.Interval)
	}
	if o.all && cmd.Flags().Changed("namespace") {
		return usageErrorf("-A (every namespace) and -n %s (one namespace) contradict each other: give one", cmd.Flag("namespace").Value)
	}
	return nil
}

// podNamespace is the namespace of the pods shown: "" with -A, else -n, else the kubeconfig context's
// (the demo has none: "default"), as oc adm top pods does.
func (g *globalOptions) podNamespace(cmd *cobra.Command, all bool) string {
	switch {
	case all:
		return ""
	case cmd.Flags().Changed("namespace") && *g.kube.Namespace != "":
		return *g.kube.Namespace
	case g.demo:
		return "default"
	}
	ns, _, err := g.kube.ToRawKubeConfigLoader().Namespace()
	if err != nil || ns == "" {
		return "default"
	}
	return ns
}

// sortPodMetrics orders pods by CPU or memory, largest first (unknown last); "" keeps namespace and name
// order. Containers are sorted the same way.
func sortPodMetrics(pods []model.PodMetrics, by string) {
	if by == "" {
		return
	}
	key := func(cpu, mem *float64) float64 {
		v := mem
		if by == "cpu" {
			v = cpu
		}
		if v == nil {
			return math.Inf(-1)
		}
		return *v
	}
	sort.SliceStable(pods, func(i, j int) bool {
		return key(pods[i].CPUCores, pods[i].MemoryBytes) > key(pods[j].CPUCores, pods[j].MemoryBytes)
	})
	for _, p := range pods {
		sort.SliceStable(p.Containers, func(i, j int) bool {
			return key(p.Containers[i].CPUCores, p.Containers[i].MemoryBytes) > key(p.Containers[j].CPUCores, p.Containers[j].MemoryBytes)
		})
	}
}

// writeTopPods prints oc adm top pods' table: NAMESPACE (with -A) NAME CPU(cores) MEMORY(bytes), or with
// --containers POD NAME; then the nodes whose pods could not be read, with why.
func writeTopPods(w io.Writer, r model.PodMetricsReport, namespace string, containers bool) {
	fmt.Fprintf(w, "metrics: %s (%s)\n", r.Source, r.Why)
	if len(r.Pods) == 0 {
		where := "in namespace " + namespace + " (-A for every namespace)"
		if namespace == "" {
			where = "in any namespace"
		}
		switch {
		case r.Asked == 0:
			fmt.Fprintln(w, "no running pods on Windows nodes "+where)
		case len(r.Errors) > 0:
			fmt.Fprintf(w, "no pod metrics %s: the %d running pods' nodes could not be read; the reasons follow\n", where, r.Asked)
		default:
			fmt.Fprintf(w, "no pod metrics %s yet: the source has no figures for the %d running pods (started a moment ago?)\n", where, r.Asked)
		}
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
		ns := ""
		if namespace == "" {
			ns = "NAMESPACE\t"
		}
		if containers {
			fmt.Fprintln(tw, ns+"POD\tNAME\tCPU(cores)\tMEMORY(bytes)")
		} else {
			fmt.Fprintln(tw, ns+"NAME\tCPU(cores)\tMEMORY(bytes)")
		}
		for _, p := range r.Pods {
			lead := ""
			if namespace == "" {
				lead = p.Namespace + "\t"
			}
			if !containers {
				fmt.Fprintf(tw, "%s%s\t%s\t%s\n", lead, p.Name, milliCores(p.CPUCores), mebibytes(p.MemoryBytes))
				continue
			}
			for _, c := range p.Containers {
				fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\n", lead, p.Name, c.Name, milliCores(c.CPUCores), mebibytes(c.MemoryBytes))
			}
		}
		tw.Flush()
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "%s: no pod metrics: %s\n", e.Node, e.Error)
	}
}

// milliCores is CPU as oc adm top prints it: whole millicores, rounded up ("150m").
func milliCores(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.0fm", math.Ceil(*v*1000-1e-9))
}

// mebibytes is memory as oc adm top prints it: whole MiB ("380Mi").
func mebibytes(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%dMi", int64(*v)/(1<<20))
}
