package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wmcon/wmcon/nodeconfig"
	"github.com/wmcon/wmcon/nodeconfig/contract"
)

// renderServicesFlags are configure's --render-services mode: the services contract wmcon applies without
// WMCO, printed with no cluster and no host.
type renderServicesFlags struct {
	render    bool
	platform  string
	apiServer string
	vxlanPort string
}

func (r *renderServicesFlags) add(fs *pflag.FlagSet) {
	fs.BoolVar(&r.render, "render-services", false, "print, with no cluster, the services data wmcon applies without WMCO, in the windows-services ConfigMap's format (needs --platform and --api-server)")
	fs.StringVar(&r.platform, "platform", "", "with --render-services: the platform ("+strings.Join(nodeconfig.Platforms, ", ")+")")
	fs.StringVar(&r.apiServer, "api-server", "", "with --render-services: the API server's internal URL (https://…), as hosts reach it")
	fs.StringVar(&r.vxlanPort, "vxlan-port", "", "with --render-services: the hybrid overlay's custom VXLAN port (default: none)")
}

// inputs checks the flags, each problem a usage error saying what to give instead.
func (r *renderServicesFlags) inputs() (nodeconfig.ContractInputs, error) {
	platform, ok := nodeconfig.CanonicalPlatform(r.platform)
	if !ok {
		if r.platform == "" {
			return nodeconfig.ContractInputs{}, usageErrorf("--render-services needs --platform: one of %s", strings.Join(nodeconfig.Platforms, ", "))
		}
		return nodeconfig.ContractInputs{}, usageErrorf("--platform %q is not a platform wmcon knows: use one of %s", r.platform, strings.Join(nodeconfig.Platforms, ", "))
	}
	if u, err := url.Parse(r.apiServer); r.apiServer == "" || err != nil || u.Scheme != "https" || u.Host == "" {
		return nodeconfig.ContractInputs{}, usageErrorf("--api-server %q: give the API server's internal URL, e.g. https://api-int.example.test:6443", r.apiServer)
	}
	if r.vxlanPort != "" {
		if p, err := strconv.Atoi(r.vxlanPort); err != nil || p < 1 || p > 65535 {
			return nodeconfig.ContractInputs{}, usageErrorf("--vxlan-port %q is not a port number (1-65535)", r.vxlanPort)
		}
	}
	return nodeconfig.ContractInputs{Platform: platform, APIServerURL: r.apiServer, VXLANPort: r.vxlanPort}, nil
}

// write prints the contract: -o json gives the ConfigMap's data exactly as WMCO stores it (each value a
// JSON string), to diff against `oc get cm windows-services-<version> -o jsonpath='{.data}'`; text lists it
// for reading.
func (r *renderServicesFlags) write(w io.Writer, format string) error {
	in, err := r.inputs()
	if err != nil {
		return err
	}
	d, err := nodeconfig.Contract(in)
	if err != nil {
		return err
	}
	switch format {
	case "json":
		data, err := contract.Render(d)
		if err != nil {
			return err
		}
		b, err := json.MarshalIndent(data, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "text", "":
		return writeContractText(w, d)
	}
	return usageErrorf("--output %q: use text or json", format)
}

func writeContractText(w io.Writer, d contract.Data) error {
	var b strings.Builder
	for _, s := range d.Services {
		when := "after the Node exists"
		if s.Bootstrap {
			when = "bootstrap"
		}
		fmt.Fprintf(&b, "%s (priority %d, %s", s.Name, s.Priority, when)
		if len(s.Dependencies) > 0 {
			fmt.Fprintf(&b, ", depends on %s", strings.Join(s.Dependencies, ","))
		}
		fmt.Fprintf(&b, ")\n  %s\n", s.Command)
		for _, v := range s.NodeVariablesInCommand {
			fmt.Fprintf(&b, "  %s = the Node's %s\n", v.Name, v.NodeObjectJSONPath)
		}
		for _, p := range s.PowershellPreScripts {
			if p.VariableName != "" {
				fmt.Fprintf(&b, "  %s = the output of: %s\n", p.VariableName, p.Path)
			} else {
				fmt.Fprintf(&b, "  first runs: %s\n", p.Path)
			}
			for _, v := range p.NodeArgs {
				fmt.Fprintf(&b, "    %s = %s\n", v.Name, v.NodeObjectJSONPath)
			}
		}
	}
	fmt.Fprintf(&b, "environment: %d variables set, watched: %s\n", len(d.EnvironmentVars), strings.Join(d.WatchedEnvironmentVars, ", "))
	_, err := io.WriteString(w, b.String())
	return err
}
