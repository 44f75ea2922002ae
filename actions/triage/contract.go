package triage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/nodeconfig/contract"
	"github.com/wmcon/wmcon/remote"
)

// ServicesContract is the contract a node's host is held to. With WMCO installed it is WMCO's services
// ConfigMap (cluster.NodeServicesContract, the source configure and upgrade take too); standalone
// (Operator false) triage checks the services wmcon installs by name, as before.
type ServicesContract struct {
	Operator bool
	Data     contract.Data
	Source   cluster.ContractSource
	// Node is the Node object the contract's node variables are read from.
	Node *corev1.Node
}

// ServicesContract reads the node and the installed operator's contract for it. Standalone it returns a
// ServicesContract without Operator; a missing or malformed ConfigMap is an error naming it, with Operator
// and Source set.
func (c ClusterReads) ServicesContract(ctx context.Context, node string) (ServicesContract, error) {
	ops := cluster.NewOps(c.Clients)
	n, err := ops.NodeObject(ctx, node)
	if err != nil {
		return ServicesContract{}, err
	}
	d, src, err := ops.NodeServicesContract(ctx, n)
	switch {
	case errors.Is(err, cluster.ErrNoOperator):
		return ServicesContract{}, nil
	case err != nil:
		return ServicesContract{Operator: src.ConfigMap != "", Source: src}, err
	}
	return ServicesContract{Operator: true, Data: d, Source: src, Node: n}, nil
}

// contractFacts is the contract read for the triage.
type contractFacts struct {
	configured bool // a TriageCluster was given
	sc         ServicesContract
	err        error
}

// held says whether the host is checked against the operator's contract.
func (f contractFacts) held() bool { return f.err == nil && f.sc.Operator }

func readContract(ctx context.Context, deps TriageDeps, node string) contractFacts {
	f := contractFacts{configured: deps.Cluster != nil}
	if deps.Cluster == nil {
		return f
	}
	ctx, cancel := context.WithTimeout(ctx, deps.ClusterTimeout)
	defer cancel()
	f.sc, f.err = deps.Cluster.ServicesContract(ctx, node)
	return f
}

// contractServices are the contract's services that the host has installed.
func contractServices(d contract.Data, states map[string]remote.ServiceState) []string {
	var out []string
	for _, s := range d.Services {
		if _, ok := states[s.Name]; ok {
			out = append(out, s.Name)
		}
	}
	return out
}

// contractChecks compare the host with the operator's contract: each service's command line and
// dependencies, and the files the contract lists with their checksums. Standalone there are none.
func (in triageInput) contractChecks() []diagnosis.Check {
	cf := in.contract
	switch {
	case cf.err != nil && cf.sc.Operator:
		c := diagnosis.Check{ID: "services-contract", Title: "WMCO's services ConfigMap", Status: diagnosis.CheckFail, Rank: rankContract,
			Detail: "cannot check the host's services against WMCO's contract: " + cf.err.Error(),
			Fix: "WMCO's node daemon configures no service without it either: check that the operator runs (" + event.Run("operator", "status") +
				") and its log (oc logs -n " + config.OperatorNamespace + " deployment/" + config.OperatorName + ")"}
		c.Evidence = []string{"read: " + cf.sc.Source.String()}
		return []diagnosis.Check{c}
	case cf.err != nil:
		c := diagnosis.Check{ID: "services-contract", Title: "WMCO's services ConfigMap", Status: diagnosis.CheckUnknown, Rank: rankContract,
			Detail: "cannot tell which services contract holds for the node: " + cf.err.Error(),
			Fix:    "check access to the cluster and check again (" + in.again() + ")"}
		return []diagnosis.Check{c}
	case !cf.held():
		return nil
	}
	out := []diagnosis.Check{in.serviceCommands()}
	if len(cf.sc.Data.Files) > 0 {
		out = append(out, in.contractFiles())
	}
	return out
}

// serviceCommands compares each installed service's command line and dependencies with the contract's.
func (in triageInput) serviceCommands() diagnosis.Check {
	src := in.contract.sc.Source
	c := diagnosis.Check{ID: "service-commands", Title: "Service command lines", Rank: rankContract,
		Evidence: []string{"contract: " + src.String()}}
	switch {
	case !in.hostReached():
		return in.hostUnknown(c)
	case in.host.configsErr != nil:
		c.Status, c.Detail = diagnosis.CheckUnknown, "cannot read the services' configuration: "+in.host.configsErr.Error()
		c.Fix = "check again (" + in.again() + ")"
		return c
	}
	var drifted []string
	checked := 0
	for _, s := range in.contract.sc.Data.Services {
		cfg, ok := in.host.configs[s.Name]
		if !ok {
			continue // not installed: the service's own check says so
		}
		checked++
		diffs, err := contract.Drift(s, in.contract.sc.Node, cfg.BinPath)
		if err != nil {
			c.Evidence = append(c.Evidence, s.Name+": cannot resolve its command: "+err.Error())
			drifted = append(drifted, s.Name)
			continue
		}
		for _, d := range diffs {
			c.Evidence = append(c.Evidence, s.Name+": "+d.String())
		}
		if dep := dependencyDrift(s.Dependencies, cfg.Dependencies); dep != "" {
			c.Evidence = append(c.Evidence, s.Name+": "+dep)
			diffs = append(diffs, contract.Difference{})
		}
		if len(diffs) > 0 {
			drifted = append(drifted, s.Name)
			if c.Service == "" {
				c.Service = s.Name
			}
		}
	}
	if len(drifted) == 0 {
		c.Status = diagnosis.CheckOK
		c.Detail = fmt.Sprintf("the %d installed services run the command lines of WMCO %s's contract", checked, src.Version)
		return c
	}
	c.Status = diagnosis.CheckWarn
	c.Detail = "drift from WMCO " + src.Version + "'s contract (" + src.ConfigMap + "): " + strings.Join(drifted, ", ") +
		" run another command line than the ConfigMap says"
	c.Fix = "WMCO's node daemon puts a service back to the ConfigMap's command line within two minutes: if the drift stays, read its log (" +
		event.RunLogs(in.node.Name, wicd) + "); for a node wmcon configured: " + event.Run("configure", in.node.Name)
	return c
}

// dependencyDrift says how the host's dependencies differ from the contract's ("" when they are the same
// set, which is how WMCO's node daemon compares them).
func dependencyDrift(want, got []string) string {
	w, g := lowerSorted(want), lowerSorted(got)
	if slices.Equal(w, g) {
		return ""
	}
	return fmt.Sprintf("dependencies: the contract has [%s], the host has [%s]", strings.Join(want, " "), strings.Join(got, " "))
}

func lowerSorted(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.ToLower(s)
	}
	slices.Sort(out)
	return out
}

// contractFiles compares the host's copy of each file the contract lists with its checksum.
func (in triageInput) contractFiles() diagnosis.Check {
	src := in.contract.sc.Source
	c := diagnosis.Check{ID: "payload-files", Title: "Payload files", Rank: rankContract + 1,
		Evidence: []string{"manifest: " + src.String()}}
	switch {
	case !in.hostReached():
		return in.hostUnknown(c)
	case in.host.hashesErr != nil:
		c.Status, c.Detail = diagnosis.CheckUnknown, "cannot read the files' checksums: "+in.host.hashesErr.Error()
		c.Fix = "check again (" + in.again() + ")"
		return c
	}
	var bad []string
	for _, f := range in.contract.sc.Data.Files {
		got, ok := hashOf(in.host.hashes, f.Path)
		switch {
		case !ok:
			bad = append(bad, f.Path)
			c.Evidence = append(c.Evidence, f.Path+": missing on the host (the manifest has sha256 "+strings.ToLower(f.Checksum)+")")
		case !strings.EqualFold(got, f.Checksum):
			bad = append(bad, f.Path)
			c.Evidence = append(c.Evidence, f.Path+": the manifest has sha256 "+strings.ToLower(f.Checksum)+", the host's file "+strings.ToLower(got))
		}
	}
	if len(bad) == 0 {
		c.Status, c.Detail = diagnosis.CheckOK, fmt.Sprintf("the %d files the ConfigMap lists match their checksums", len(in.contract.sc.Data.Files))
		return c
	}
	c.Status = diagnosis.CheckWarn
	c.Detail = "drift from WMCO " + src.Version + "'s file manifest (" + src.ConfigMap + "): " + strings.Join(bad, ", ")
	c.Fix = "WMCO copies its payload again when it reconfigures the node: remove the version annotation to have it do so (oc annotate node " +
		in.node.Name + " " + config.VersionAnnotation + "-); for a node wmcon configured: " + event.Run("configure", in.node.Name)
	return c
}

// hashOf finds a path's hash; Windows paths compare without regard to case.
func hashOf(hashes map[string]string, path string) (string, bool) {
	for p, h := range hashes {
		if strings.EqualFold(p, path) {
			return h, true
		}
	}
	return "", false
}

// contractFilePaths are the paths of the files the contract lists.
func contractFilePaths(d contract.Data) []string {
	out := make([]string, len(d.Files))
	for i, f := range d.Files {
		out[i] = f.Path
	}
	return out
}
