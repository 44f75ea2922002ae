package doctor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	olm "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/operator"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/cluster/userdata"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/registries"
	"github.com/wmcon/wmcon/remote/sshkey"
)

func (f *doctorFacts) reachable() diagnosis.Check {
	var c diagnosis.Check
	if f.c.REST != nil {
		c.Evidence = []string{"server: " + model.RedactURL(f.c.REST.Host)}
	}
	v, err := f.version()
	if err != nil {
		c.Status, c.Detail = diagnosis.CheckFail, "the API server did not answer: "+err.Error()
		c.Fix = "check the kubeconfig and --context, the network or VPN to the server, and that your login has not expired (oc login)"
		return c
	}
	c.Status, c.Detail = diagnosis.CheckOK, "answers: Kubernetes "+v.GitVersion
	return c
}

// accessGroup is the permissions one part of wmcon needs, and what failing them means.
type accessGroup struct {
	enables  string // what the permissions make possible
	required bool   // without them wmcon is of little use: fail rather than warn
	// openShift: the whole group is about OpenShift objects (unknown on plain Kubernetes).
	openShift bool
	perms     []groupPermission
}

// groupPermission is a permission and whether it concerns an OpenShift-only API.
type groupPermission struct {
	cluster.Permission
	openShift bool
}

func perm(verb, group, resource, ns string) groupPermission {
	return groupPermission{Permission: cluster.Permission{Verb: verb, Group: group, Resource: resource, Namespace: ns},
		openShift: strings.HasSuffix(group, ".openshift.io") || group == olm.GroupName}
}

const (
	machineGroup = "machine.openshift.io"
	certGroup    = "certificates.k8s.io"
)

// accessGroups are what wmcon does, with the permissions each needs (doctorChecks names them in this order).
var accessGroups = []accessGroup{
	{enables: "the console's panes and the doctor's reads (nodes, MachineSets, WMCO's secrets and ConfigMaps)", required: true,
		perms: []groupPermission{perm("list", "", "nodes", ""), perm("watch", "", "nodes", ""),
			perm("list", machineGroup, "machinesets", config.MachineAPINamespace), perm("watch", machineGroup, "machinesets", config.MachineAPINamespace),
			perm("list", machineGroup, "machines", config.MachineAPINamespace),
			perm("get", "", "secrets", config.OperatorNamespace), perm("list", "", "secrets", config.OperatorNamespace),
			perm("list", "", "configmaps", config.OperatorNamespace)}},
	{enables: "cordon, drain and graceful reboot of nodes",
		perms: []groupPermission{perm("patch", "", "nodes", ""), perm("list", "", "pods", ""),
			{Permission: cluster.Permission{Verb: "create", Resource: "pods", Subresource: "eviction"}}, perm("delete", "", "pods", "")}},
	{enables: "wmcon operator install / uninstall (OLM's namespace, OperatorGroup, Subscription, InstallPlan approval)", openShift: true,
		perms: []groupPermission{perm("create", "", "namespaces", ""), perm("create", "operators.coreos.com", "operatorgroups", config.OperatorNamespace),
			perm("create", olm.GroupName, "subscriptions", config.OperatorNamespace), perm("update", olm.GroupName, "installplans", config.OperatorNamespace),
			perm("delete", olm.GroupName, "subscriptions", config.OperatorNamespace), perm("delete", olm.GroupName, "clusterserviceversions", config.OperatorNamespace)}},
	{enables: "wmcon key, machineset and byoh (the SSH key secret, Windows MachineSets, the " + config.BYOHConfigMap + " ConfigMap)",
		perms: []groupPermission{perm("create", "", "secrets", config.OperatorNamespace), perm("update", "", "secrets", config.OperatorNamespace),
			perm("create", machineGroup, "machinesets", config.MachineAPINamespace), perm("update", machineGroup, "machinesets", config.MachineAPINamespace),
			perm("delete", machineGroup, "machinesets", config.MachineAPINamespace),
			perm("create", "", "configmaps", config.OperatorNamespace), perm("update", "", "configmaps", config.OperatorNamespace)}},
	{enables: "wmcon configure: approving the kubelet's client and serving certificates",
		perms: []groupPermission{perm("list", certGroup, "certificatesigningrequests", ""),
			{Permission: cluster.Permission{Verb: "update", Group: certGroup, Resource: "certificatesigningrequests", Subresource: "approval"}},
			{Permission: cluster.Permission{Verb: "approve", Group: certGroup, Resource: "signers", Name: "kubernetes.io/kube-apiserver-client-kubelet"}},
			{Permission: cluster.Permission{Verb: "approve", Group: certGroup, Resource: "signers", Name: "kubernetes.io/kubelet-serving"}}}},
	{enables: "reading node logs through the API server (otherwise wmcon reads them over SSH)",
		perms: []groupPermission{{Permission: cluster.Permission{Verb: "get", Resource: "nodes", Subresource: "proxy"}}}},
}

// allPermissions is every permission of every group, each once.
func allPermissions() []cluster.Permission {
	var out []cluster.Permission
	for _, g := range accessGroups {
		for _, p := range g.perms {
			if !slices.Contains(out, p.Permission) {
				out = append(out, p.Permission)
			}
		}
	}
	return out
}

func (f *doctorFacts) access(g accessGroup) diagnosis.Check {
	var c diagnosis.Check
	if u, down := f.down(c); down {
		return u
	}
	openShift := true
	if groups, err := f.groups(); err == nil {
		openShift = groups["config.openshift.io/v1"]
	}
	if g.openShift && !openShift {
		c.Status, c.Detail = diagnosis.CheckUnknown, "not an OpenShift cluster: "+g.enables+" does not apply"
		c.Fix = "nothing to do on plain Kubernetes"
		return c
	}
	reviews := f.reviews()
	var denied, failed []string
	for _, p := range g.perms {
		if p.openShift && !openShift {
			continue
		}
		a := reviews[p.Permission]
		switch {
		case a.Err != nil:
			failed = append(failed, a.Err.Error())
			c.Evidence = append(c.Evidence, "? "+p.String())
		case a.Allowed:
			c.Evidence = append(c.Evidence, "✓ "+p.String())
		default:
			denied = append(denied, p.String())
			c.Evidence = append(c.Evidence, "✗ "+p.String())
		}
	}
	switch {
	case len(denied) > 0:
		c.Status = diagnosis.CheckWarn
		if g.required {
			c.Status = diagnosis.CheckFail
		}
		c.Detail = "you may not " + strings.Join(denied, ", ") + ": " + g.enables + " will be refused"
		c.Fix = "ask a cluster administrator for these permissions (a Role/ClusterRole bound to you), or log in as a user who has them"
	case len(failed) > 0:
		c.Status, c.Detail = diagnosis.CheckUnknown, "cannot ask the API server: "+failed[0]
		c.Fix = "SelfSubjectAccessReviews are open to every authenticated user: check the connection and your login"
	default:
		c.Status, c.Detail = diagnosis.CheckOK, "allowed: "+g.enables
	}
	return c
}

// supportedWindow is the Kubernetes window of the installed operator, else of WMCO 11.0, the current release.
func (f *doctorFacts) supportedWindow() (lo, hi int, who string) {
	if st, err := f.operator(); err == nil && st.CSV != nil {
		v := st.CSV.Spec.Version.String()
		if lo, hi, ok := config.KubernetesWindow(v); ok {
			return lo, hi, "the installed WMCO " + v
		}
	}
	return 36, 37, "WMCO 11.0 (no known window for an installed operator)"
}

func (f *doctorFacts) kubeVersion() diagnosis.Check {
	var c diagnosis.Check
	if u, down := f.down(c); down {
		return u
	}
	v, _ := f.version()
	lo, hi, who := f.supportedWindow()
	window := fmt.Sprintf("v1.%d–v1.%d", lo, hi)
	c.Evidence = []string{"Kubernetes: " + v.GitVersion, who + " supports " + window}
	if cv, err := f.cv(); err == nil {
		c.Evidence = append(c.Evidence, "OpenShift: "+clusterVersionOf(cv))
	}
	major, minor, ok := config.MajorMinor(v.GitVersion)
	switch {
	case !ok:
		c.Status, c.Detail = diagnosis.CheckUnknown, "cannot read the server's version "+event.OrNone(v.GitVersion)
		c.Fix = "compare the Kubernetes version with the WMCO release notes"
	case major != 1 || minor < lo || minor > hi:
		c.Status = diagnosis.CheckFail
		c.Detail = "Kubernetes " + v.GitVersion + " is outside " + window + ", the window of " + who
		c.Fix = "use the WMCO release made for this OpenShift release (each WMCO release supports the matching OpenShift), or upgrade the cluster"
	default:
		c.Status, c.Detail = diagnosis.CheckOK, "Kubernetes "+v.GitVersion+" is within "+window
	}
	return c
}

func clusterVersionOf(cv *configv1.ClusterVersion) string {
	if v := cv.Status.Desired.Version; v != "" {
		return v
	}
	for _, h := range cv.Status.History {
		if h.State == configv1.CompletedUpdate {
			return h.Version
		}
	}
	return "(unknown)"
}

// windowsServer lists the Windows Server releases this cluster can take as nodes.
func (f *doctorFacts) windowsServer() diagnosis.Check {
	c := diagnosis.Check{Status: diagnosis.CheckOK}
	if u, down := f.down(c); down {
		return u
	}
	releases := []string{"Windows Server 2019 LTSC", "Windows Server 2022 LTSC", "Windows Server 2025 where the platform offers it"}
	var why []string
	if n, err := f.network(); err == nil && n.VXLANPort != 0 && n.VXLANPort != 4789 {
		why = append(why, fmt.Sprintf("the cluster uses a custom VXLAN port (%d), which Windows Server 2019 cannot use", n.VXLANPort))
	}
	if i, err := f.infra(); err == nil && cluster.PlatformOf(i) == configv1.VSpherePlatformType {
		why = append(why, "vSphere needs a custom VXLAN port, which Windows Server 2019 cannot use")
	}
	if len(why) > 0 {
		releases = releases[1:]
		c.Evidence = why
	}
	c.Detail = strings.Join(releases, ", ")
	return c
}

func (f *doctorFacts) networkType() diagnosis.Check {
	c, ok := f.openShift(diagnosis.Check{})
	if !ok {
		return c
	}
	n, err := f.network()
	if err != nil {
		return cannotCheck(c, "the network type", "get network.config.openshift.io/cluster", err)
	}
	switch n.Type {
	case "":
		c.Status, c.Detail = diagnosis.CheckUnknown, "network.config.openshift.io/cluster names no network type"
		c.Fix = "check it with oc get network.config cluster -o jsonpath='{.spec.networkType}'"
	case "OVNKubernetes":
		c.Status, c.Detail = diagnosis.CheckOK, "OVNKubernetes"
	default:
		c.Status, c.Detail = diagnosis.CheckFail, "network type "+n.Type+" cannot carry Windows nodes: WMCO needs OVNKubernetes with hybrid overlay"
		c.Fix = "migrate the cluster network to OVN-Kubernetes (a cluster-wide change), then configure hybrid overlay networking"
	}
	return c
}

const hybridPatch = `oc patch network.operator.openshift.io cluster --type=merge -p ` +
	`'{"spec":{"defaultNetwork":{"ovnKubernetesConfig":{"hybridOverlayConfig":{"hybridClusterNetwork":[{"cidr":"10.132.0.0/14","hostPrefix":23}]%s}}}}}'`

func (f *doctorFacts) hybridOverlay() diagnosis.Check {
	c, ok := f.openShift(diagnosis.Check{})
	if !ok {
		return c
	}
	n, err := f.network()
	if err != nil {
		return cannotCheck(c, "hybrid overlay", "get network.operator.openshift.io/cluster", err)
	}
	vsphere := false
	if i, err := f.infra(); err == nil {
		vsphere = cluster.PlatformOf(i) == configv1.VSpherePlatformType
	}
	custom := n.VXLANPort != 0 && n.VXLANPort != 4789
	if n.VXLANPort != 0 {
		c.Evidence = append(c.Evidence, fmt.Sprintf("hybridOverlayVXLANPort: %d", n.VXLANPort))
	}
	port := ""
	if vsphere {
		port = `,"hybridOverlayVXLANPort":9898`
	}
	switch {
	case !n.OperatorFound:
		c.Status, c.Detail = diagnosis.CheckUnknown, "network.operator.openshift.io/cluster not found: hybrid overlay settings unknown"
		c.Fix = "check it with oc get network.operator cluster -o yaml"
	case !n.HybridOverlay || len(n.HybridClusterNetworks) == 0:
		c.Status, c.Detail = diagnosis.CheckFail, "hybrid overlay networking is not configured (no hybridClusterNetwork): Windows pods would get no network"
		c.Fix = "configure it (pick a CIDR that overlaps nothing else): " + fmt.Sprintf(hybridPatch, port)
	case vsphere && !custom:
		c.Status, c.Detail = diagnosis.CheckFail, "vSphere needs a custom hybridOverlayVXLANPort: the default 4789 collides with vSphere's own VXLAN"
		c.Fix = `oc patch network.operator.openshift.io cluster --type=merge -p '{"spec":{"defaultNetwork":{"ovnKubernetesConfig":{"hybridOverlayConfig":{"hybridOverlayVXLANPort":9898}}}}}'`
	default:
		c.Status, c.Detail = diagnosis.CheckOK, "hybridClusterNetwork "+strings.Join(n.HybridClusterNetworks, ", ")
		if custom {
			c.Detail += fmt.Sprintf("; custom VXLAN port %d (Windows Server 2019 nodes cannot use it)", n.VXLANPort)
		}
	}
	return c
}

// namedCIDR is a network range and the setting it comes from.
type namedCIDR struct {
	field string
	net   *net.IPNet
}

func (f *doctorFacts) networkCIDRs() diagnosis.Check {
	c, ok := f.openShift(diagnosis.Check{})
	if !ok {
		return c
	}
	n, err := f.network()
	if err != nil {
		return cannotCheck(c, "the network ranges", "get network.config.openshift.io/cluster and network.operator.openshift.io/cluster", err)
	}
	var nets []namedCIDR
	var problems []string
	add := func(field string, cidrs []string) {
		for _, s := range cidrs {
			c.Evidence = append(c.Evidence, field+": "+s)
			_, ipn, err := net.ParseCIDR(s)
			if err != nil {
				problems = append(problems, field+" "+s+" is not a CIDR")
				continue
			}
			nets = append(nets, namedCIDR{field, ipn})
		}
	}
	add("clusterNetwork", n.ClusterNetworks)
	add("hybridClusterNetwork", n.HybridClusterNetworks)
	add("serviceNetwork", n.ServiceNetworks)
	problems = append(problems, cidrProblems(nets)...)
	if len(problems) > 0 {
		c.Status, c.Detail = diagnosis.CheckFail, strings.Join(problems, "; ")
		c.Fix = "Windows cannot route class E (240.0.0.0/4), and overlapping ranges misroute pods: the cluster and service networks " +
			"are install-time choices; hybridClusterNetwork can be set to a free range on network.operator.openshift.io/cluster"
		return c
	}
	c.Status, c.Detail = diagnosis.CheckOK, "no class E range, no overlap"
	return c
}

// cidrProblems names the class E ranges and every pair that overlaps.
func cidrProblems(nets []namedCIDR) []string {
	var out []string
	for i, a := range nets {
		if config.ClassE.Contains(a.net.IP) || a.net.Contains(config.ClassE.IP) {
			out = append(out, a.field+" "+a.net.String()+" is in class E (240.0.0.0/4)")
		}
		for _, b := range nets[i+1:] {
			if a.net.Contains(b.net.IP) || b.net.Contains(a.net.IP) {
				out = append(out, a.field+" "+a.net.String()+" overlaps "+b.field+" "+b.net.String())
			}
		}
	}
	return out
}

func (f *doctorFacts) platform() diagnosis.Check {
	c, ok := f.openShift(diagnosis.Check{})
	if !ok {
		return c
	}
	i, err := f.infra()
	switch {
	case apierrors.IsNotFound(err):
		c.Status, c.Detail = diagnosis.CheckUnknown, "infrastructure/cluster not found: the platform is unknown"
		c.Fix = "check it with oc get infrastructure cluster -o yaml"
		return c
	case err != nil:
		return cannotCheck(c, "the platform", "get infrastructures.config.openshift.io/cluster", err)
	}
	p := cluster.PlatformOf(i)
	c.Evidence = []string{"infrastructure name: " + event.OrNone(i.Status.InfrastructureName), "platform: " + event.OrNone(string(p))}
	c.Status = diagnosis.CheckOK
	if slices.Contains(cluster.MachineSetPlatforms, p) {
		c.Detail = string(p) + ": Windows MachineSets (wmcon machineset generate) and BYOH hosts (wmcon byoh add)"
		return c
	}
	c.Detail = event.OrNone(string(p)) + ": BYOH hosts only (wmcon byoh add); Windows MachineSets are not supported on this platform"
	return c
}

func (f *doctorFacts) proxy() diagnosis.Check {
	c, ok := f.openShift(diagnosis.Check{})
	if !ok {
		return c
	}
	p, err := f.proxyCfg()
	var bad *model.ProxyValueError
	if errors.As(err, &bad) {
		c.Status, c.Detail = diagnosis.CheckFail, err.Error()
		c.Fix = "remove the control character from the " + bad.Field + " of proxy/cluster (oc edit proxy/cluster): wmcon refuses to write it to the nodes"
		return c
	}
	if err != nil {
		if apierrors.IsForbidden(err) {
			return cannotCheck(c, "the cluster-wide proxy", "get proxies.config.openshift.io/cluster and its trusted CA ConfigMap", err)
		}
		c.Status, c.Detail = diagnosis.CheckWarn, err.Error()
		c.Fix = "Windows nodes cannot get the proxy's CA bundle: fix spec.trustedCA of proxy/cluster or create the ConfigMap it names in " + config.OpenShiftConfigNS
		return c
	}
	if p.HTTP == "" && p.HTTPS == "" {
		c.Status, c.Detail = diagnosis.CheckOK, "no cluster-wide proxy: Windows nodes reach registries directly"
		return c
	}
	for _, kv := range [][2]string{{"httpProxy", p.HTTP}, {"httpsProxy", p.HTTPS}, {"noProxy", p.NoProxy}} {
		if kv[1] != "" {
			c.Evidence = append(c.Evidence, kv[0]+": "+model.RedactURL(kv[1]))
		}
	}
	if p.TrustedCAName != "" {
		c.Evidence = append(c.Evidence, "trusted CA: ConfigMap "+config.OpenShiftConfigNS+"/"+p.TrustedCAName)
	}
	c.Status = diagnosis.CheckOK
	c.Detail = "set: each Windows node gets HTTP_PROXY, HTTPS_PROXY and NO_PROXY as system environment variables and the trusted " +
		"CA bundle; a change needs the nodes rebooted (wmcon proxy sync --reboot)"
	return c
}

func (f *doctorFacts) mirrors() diagnosis.Check {
	c, ok := f.openShift(diagnosis.Check{})
	if !ok {
		return c
	}
	in, err := f.mirrorIn()
	if err != nil {
		return cannotCheck(c, "the mirror sets", "list imagedigestmirrorsets and imagetagmirrorsets.config.openshift.io", err)
	}
	if len(in.DigestMirrorSets)+len(in.TagMirrorSets) == 0 {
		c.Status, c.Detail = diagnosis.CheckOK, "no mirror sets: nodes pull from the source registries (a connected cluster)"
		return c
	}
	c.Evidence = []string{fmt.Sprintf("%d ImageDigestMirrorSets, %d ImageTagMirrorSets", len(in.DigestMirrorSets), len(in.TagMirrorSets))}
	tree, err := registries.Render(in)
	if err != nil {
		c.Status, c.Detail = diagnosis.CheckFail, "the mirror sets are invalid: "+strings.ReplaceAll(err.Error(), "\n", "; ")
		c.Fix = "fix the entries named; wmcon mirrors render shows what Windows nodes would get"
		return c
	}
	pause, _ := registries.ParseImage(registries.PauseImage)
	for _, w := range tree.Warnings {
		if strings.Contains(w, registries.PauseImage) {
			c.Status, c.Detail = diagnosis.CheckFail, w
			c.Fix = "mirror the pause image keeping its path: <mirror>/<optional namespaces>/oss/kubernetes/pause:3.9"
			return c
		}
	}
	for _, file := range tree.Files {
		if file.Source != pause.Host {
			continue
		}
		for _, m := range file.Mirrors {
			c.Evidence = append(c.Evidence, "Windows nodes pull the pause image from "+strings.TrimSuffix(m.Repo.String(), "/")+"/"+pause.Path)
		}
		c.Status, c.Detail = diagnosis.CheckOK, registries.PauseImage+" is mirrored with its path kept (the Windows suffix rule)"
		return c
	}
	c.Status = diagnosis.CheckWarn
	c.Detail = "mirror sets exist but none mirrors " + pause.Host + ": a disconnected cluster's Windows nodes cannot pull the pause image " + registries.PauseImage
	c.Fix = "if the cluster is disconnected, mirror " + pause.Host + "/" + pause.Path + " in an ImageDigestMirrorSet, keeping the path: <mirror>/<optional namespaces>/" + pause.Path
	return c
}

func (f *doctorFacts) wmco() diagnosis.Check {
	c, ok := f.openShift(diagnosis.Check{})
	if !ok {
		return c
	}
	if groups, err := f.groups(); err == nil && !groups[olm.SchemeGroupVersion.String()] {
		c.Status, c.Detail = diagnosis.CheckFail, "OLM (operators.coreos.com) is not served: WMCO cannot be installed through it"
		c.Fix = "OpenShift runs OLM by default: check the cluster's operator-lifecycle-manager ClusterOperator"
		return c
	}
	st, err := f.operator()
	if err != nil {
		return cannotCheck(c, "WMCO", "get namespaces, subscriptions, installplans, clusterserviceversions and deployments in "+config.OperatorNamespace, err)
	}
	c.Evidence = operator.DescribeState(st)
	switch {
	case st.Subscription == nil && st.CSV == nil:
		c.Status, c.Detail = diagnosis.CheckWarn, "WMCO is not installed: nothing will configure Windows Machines or BYOH hosts"
		c.Fix = "install it: wmcon operator install --wait (or configure hosts yourself with wmcon configure)"
	case st.CSV != nil && st.CSV.Status.Phase == olm.CSVPhaseFailed:
		c.Status, c.Detail = diagnosis.CheckFail, fmt.Sprintf("CSV %s failed: %s: %s", st.CSV.Name, st.CSV.Status.Reason, st.CSV.Status.Message)
		c.Fix = "see oc describe csv -n " + config.OperatorNamespace + " " + st.CSV.Name + "; after fixing the cause, reinstall with wmcon operator uninstall and install"
	case st.InstallPlan != nil && !st.InstallPlan.Spec.Approved:
		c.Status, c.Detail = diagnosis.CheckWarn, "InstallPlan "+st.InstallPlan.Name+" waits for approval: WMCO is not installed yet"
		c.Fix = "approve it: wmcon operator install --wait --approve"
	case !st.Installed():
		c.Status, c.Detail = diagnosis.CheckWarn, "installing: "+st.Summary()
		c.Fix = "follow it with wmcon operator install --wait"
	case !st.DeploymentAvailable():
		c.Status, c.Detail = diagnosis.CheckFail, st.Summary()+", but its Deployment is not available: nothing configures Windows nodes"
		c.Fix = "look at the operator's pod: oc get pods -n " + config.OperatorNamespace + "; oc logs -n " + config.OperatorNamespace + " deployment/" + cluster.OperatorDeploymentKey
	default:
		c.Status, c.Detail = diagnosis.CheckOK, st.Summary()+", Deployment available"
	}
	return c
}

func (f *doctorFacts) privateKey() diagnosis.Check {
	var c diagnosis.Check
	if u, down := f.down(c); down {
		return u
	}
	k, err := f.key()
	if err != nil {
		return cannotCheck(c, "the SSH key", "get secrets in "+config.OperatorNamespace, err)
	}
	const fix = "wmcon key generate --out ~/.ssh/wmcon_windows_ed25519 (a new Ed25519 pair), or wmcon key create --from-file PATH"
	switch {
	case k.Info == nil && !f.windowsNodes():
		// Before the first Windows node the key is a setup step still to do (as the wizard shows it), not a fault.
		c.Status, c.Detail = diagnosis.CheckWarn, "secret "+config.OperatorNamespace+"/"+config.PrivateKeySecret+" is missing: no Windows node can be configured until it exists"
		c.Fix = "create it (wmcon setup's key step does): " + fix
	case k.Info == nil:
		c.Status, c.Detail = diagnosis.CheckFail, "secret "+config.OperatorNamespace+"/"+config.PrivateKeySecret+" is missing: the Windows nodes cannot be reconfigured or upgraded without it"
		c.Fix = "create it: " + fix
	case k.Problem != "":
		c.Evidence = []string{keyLine(*k.Info)}
		c.Status, c.Detail = diagnosis.CheckFail, k.Problem
		c.Fix = "replace it with an unencrypted Ed25519, ECDSA or RSA (2048 bits or more) key: " + fix
	default:
		c.Evidence = []string{keyLine(*k.Info)}
		c.Status, c.Detail = diagnosis.CheckOK, "usable "+k.Info.Type+" key "+k.Info.Fingerprint
	}
	return c
}

// byohEntries checks windows-instances as WMCO reads it: one wrong entry and WMCO configures none of its hosts.
func (f *doctorFacts) byohEntries() diagnosis.Check {
	var c diagnosis.Check
	if u, down := f.down(c); down {
		return u
	}
	data, err := f.byoh()
	if err != nil {
		return cannotCheck(c, "the BYOH entries", "get configmaps in "+config.OperatorNamespace, err)
	}
	problems := cluster.ValidateBYOH(context.Background(), cluster.NewBYOHConfigMap(f.c).Resolver, data)
	if len(problems) == 0 {
		c.Status, c.Detail = diagnosis.CheckOK, fmt.Sprintf("%d entries, all usable", len(data))
		return c
	}
	for _, p := range problems {
		c.Evidence = append(c.Evidence, p.String())
	}
	c.Status, c.Detail = diagnosis.CheckWarn, cluster.BYOHStallWarning(problems, len(data))
	c.Fix = "wmcon byoh validate lists each wrong entry; fix it or remove it (wmcon byoh remove ADDRESS)"
	return c
}

func keyLine(i sshkey.Info) string {
	if i.Fingerprint == "" {
		return "unreadable key"
	}
	return fmt.Sprintf("%s %d bits %s", i.Type, i.Bits, i.Fingerprint)
}

func (f *doctorFacts) userData() diagnosis.Check {
	c, ok := f.openShift(diagnosis.Check{})
	if !ok {
		return c
	}
	ud, err := f.userKey()
	if err != nil {
		return cannotCheck(c, "the user data", "get secrets in "+config.MachineAPINamespace, err)
	}
	installed := false
	if st, err := f.operator(); err == nil {
		installed = st.Installed()
	}
	secret := config.MachineAPINamespace + "/" + config.UserDataSecret
	// Who rewrites the user data: WMCO when it runs, else wmcon (standalone) when the key is installed.
	rewrite := "standalone (no WMCO), wmcon writes it with the key: wmcon key create --from-file PATH (the file of " + config.PrivateKeySecret + ")"
	if installed {
		rewrite = "WMCO rewrites it from " + config.PrivateKeySecret + " when its pod restarts: oc delete pod -n " + config.OperatorNamespace + " -l name=" + config.OperatorName
	}
	k, kerr := f.key()
	switch {
	case ud.Info == nil && installed:
		c.Status, c.Detail = diagnosis.CheckFail, "secret "+secret+" is missing although WMCO is installed: new Windows Machines cannot be reached"
		c.Fix = "WMCO writes it from " + config.PrivateKeySecret + " when it starts: check that secret, then restart the operator's pod (oc delete pod -n " + config.OperatorNamespace + " -l name=" + config.OperatorName + ")"
	case ud.Info == nil:
		c.Status, c.Detail = diagnosis.CheckWarn, "secret "+secret+" is missing: Windows Machines would boot without SSH access for WMCO or wmcon"
		c.Fix = "install WMCO (wmcon operator install --wait), which writes it from " + config.PrivateKeySecret + "; or, " + rewrite
	case ud.Problem != "":
		c.Status, c.Detail = diagnosis.CheckFail, "no public key found in "+config.UserDataSecret+": "+ud.Problem
		c.Fix = rewrite
	case kerr != nil || k.Info == nil || k.Info.Fingerprint == "":
		c.Evidence = []string{"authorized key: " + ud.Info.Fingerprint}
		c.Status, c.Detail = diagnosis.CheckUnknown, "cannot compare with "+config.PrivateKeySecret+", which is missing or unreadable"
		c.Fix = "fix " + config.PrivateKeySecret + " first"
	case ud.Info.Fingerprint != k.Info.Fingerprint:
		c.Evidence = []string{"authorized key: " + ud.Info.Fingerprint, config.PrivateKeySecret + ": " + k.Info.Fingerprint}
		c.Status, c.Detail = diagnosis.CheckFail, "the public key in "+config.UserDataSecret+" does not belong to "+config.PrivateKeySecret+": new Windows Machines will refuse the SSH login"
		c.Fix = rewrite
	default:
		c.Evidence = []string{"authorized key: " + ud.Info.Fingerprint}
		c.Status, c.Detail = diagnosis.CheckOK, "holds "+config.PrivateKeySecret+"'s public key"
		if p := f.platformType(); p != "" {
			if err := userdata.Runs(ud.Script, p); err != nil {
				c.Status, c.Detail = diagnosis.CheckFail, "holds "+config.PrivateKeySecret+"'s public key, but new "+p+" Machines will not run it: "+err.Error()
				c.Fix = rewrite
			}
		}
	}
	return c
}

// platformType is the infrastructure's platform type, "" when it cannot be read.
func (f *doctorFacts) platformType() string {
	i, err := f.infra()
	if err != nil || i.Status.PlatformStatus == nil {
		return ""
	}
	return string(i.Status.PlatformStatus.Type)
}
