package triage

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
	"github.com/wmcon/wmcon/remote"
)

// Likelihood ranks: among checks of the same status, lower comes first. Causes come before their
// symptoms (a changed host key before "cannot reach", a stopped kubelet before NotReady), host-level
// causes before cluster-wide prerequisites, and informational checks last.
const (
	rankHostKey         = 10
	rankHostSSH         = 11
	rankServicesMissing = 19
	rankServices        = 20 // + the service's place in serviceRanks
	rankContract        = 29 // the services' command lines and files against WMCO's contract
	rankNodeReady       = 30
	rankMetadataRoute   = 35
	rankNetworkType     = 40
	rankClusterCIDR     = 41
	rankHybridOverlay   = 42
	rankKubeVersion     = 43
	rankRebootRequired  = 50
	rankPodPressure     = 54 // a pod using most of the memory or CPU is why the node is short of it
	rankKubeletErrors   = 55
	rankDiskFree        = 56 // a full disk is why DiskPressure is set
	rankMemoryFull      = 57
	rankPressure        = 58
	rankCPUBusy         = 59
	rankWMCOVersion     = 60
	rankScheduling      = 65
	rankPrivateKey      = 70
	rankUserDataKey     = 71
	rankEvents          = 80
	rankWindowsBuild    = 90
)

// wicd is WMCO's node daemon, which only WMCO installs (wmcon's engine configures the services itself).
const wicd = "windows-instance-config-daemon"

// serviceRanks orders services by how often their failure is why a node is unhappy.
var serviceRanks = []string{"kubelet", "containerd", "hybrid-overlay-node", "kube-proxy",
	"windows-instance-config-daemon", "csi-proxy", "windows_exporter", "cloud-node-manager"}

// serviceRoles says what breaks when a service is down.
var serviceRoles = map[string]string{
	"kubelet":                        "without the kubelet the node runs no pods and turns NotReady",
	"containerd":                     "the container runtime: the kubelet cannot start containers without it",
	"hybrid-overlay-node":            "pod networking (OVN hybrid overlay): pods on this node lose their network",
	"kube-proxy":                     "Service traffic to and from this node's pods",
	"windows-instance-config-daemon": "WICD keeps the node's services configured as WMCO wants them",
	"csi-proxy":                      "storage: CSI volumes cannot be mounted",
	"windows_exporter":               "node metrics (port 9182) for monitoring",
	"cloud-node-manager":             "Azure node addresses and zones",
}

// triageInput is everything the checks are computed from; checks are pure functions of it.
type triageInput struct {
	node     model.NodeInfo
	snap     *model.Snapshot
	host     hostFacts
	extra    clusterFacts
	metrics  metricsFacts
	contract contractFacts
	now      time.Time
	logLines int
}

func (in triageInput) checks() []diagnosis.Check {
	out := []diagnosis.Check{in.hostSSH(), in.hostKey()}
	out = append(out, in.services()...)
	out = append(out, in.contractChecks()...)
	out = append(out, in.nodeReady(), in.pressure(), in.scheduling(), in.rebootRequired(), in.wmcoVersion(),
		in.kubeVersion(), in.networkType(), in.clusterCIDR(), in.hybridOverlay(), in.kubeletErrors(),
		in.privateKey(), in.userDataKey(), in.events(), in.windowsBuild())
	out = append(out, in.metricsChecks()...)
	if strings.EqualFold(in.snap.Cluster.Platform, "AWS") {
		out = append(out, in.metadataRoute())
	}
	return out
}

func (in triageInput) addr() string {
	if in.node.InternalIP != "" {
		return in.node.InternalIP
	}
	return in.node.InternalDNS
}

// hostUnknown marks a host check that could not run, saying why.
func (in triageInput) hostUnknown(c diagnosis.Check) diagnosis.Check {
	c.Status = diagnosis.CheckUnknown
	if !in.host.configured {
		c.Detail = "not checked: no SSH access to Windows hosts is configured"
		c.Fix = "give wmcon an SSH key (the cloud-private-key secret or --ssh-key) to inspect the host"
		return c
	}
	c.Detail = "unknown: cannot reach host (" + in.host.reachErr.Error() + ")"
	if errors.As(in.host.reachErr, new(*remote.LocalError)) {
		c.Detail = "unknown: the host was not contacted (" + in.host.reachErr.Error() + ")"
	}
	c.Fix = "fix SSH access first (see the SSH check)"
	return c
}

func (in triageInput) hostReached() bool { return in.host.configured && in.host.reachErr == nil }

func (in triageInput) hostSSH() diagnosis.Check {
	c := diagnosis.Check{ID: "host-ssh", Title: "SSH to the host", Rank: rankHostSSH, Evidence: []string{"address: " + in.addr()}}
	var mismatch *remote.HostKeyMismatchError
	var auth *remote.AuthError
	var local *remote.LocalError
	err := in.host.reachErr
	switch {
	case !in.host.configured:
		return in.hostUnknown(c)
	case err == nil:
		c.Status, c.Detail = diagnosis.CheckOK, "the host answers over SSH at "+in.addr()
	case errors.As(err, &mismatch):
		c.Status, c.Detail = diagnosis.CheckFail, "wmcon refused to log in because the host key changed"
		c.Fix = "resolve the host key check first"
	case errors.As(err, &auth):
		c.Status, c.Detail = diagnosis.CheckFail, err.Error()
		c.Fix = "check the user (Administrator, capi on Azure, or the windows-instances entry for BYOH) and that cloud-private-key matches the key in windows-user-data"
	case errors.As(err, &local):
		c.Status, c.Detail = diagnosis.CheckFail, err.Error()
		c.Fix = "fix the SSH setup on this machine first: the private key and its passphrase (--ssh-key, " +
			"--ssh-passphrase-env), or the known_hosts file named above; nothing is known about the host yet"
	default:
		c.Status, c.Detail = diagnosis.CheckFail, "cannot reach the host: "+err.Error()
		c.Fix = "check in the cloud console that the instance is running (a reboot that never came back shows here); " +
			"check that this machine can route to " + in.addr() + " (usually through a bastion) and that port 22 is open"
	}
	return c
}

func (in triageInput) hostKey() diagnosis.Check {
	c := diagnosis.Check{ID: "host-key", Title: "Pinned host key", Rank: rankHostKey}
	pinned := annotationFingerprint(in.node.Annotations[config.HostKeyAnnotation])
	if pinned != "" {
		c.Evidence = append(c.Evidence, "pinned on the node ("+config.HostKeyAnnotation+"): "+pinned)
	}
	var mismatch *remote.HostKeyMismatchError
	switch {
	case errors.As(in.host.reachErr, &mismatch):
		c.Status = diagnosis.CheckFail
		c.Detail = "the host presented a different SSH host key than the pinned one: it was reinstalled, or something is intercepting the connection"
		c.Evidence = append(c.Evidence, "expected: "+mismatch.Expected, "presented: "+mismatch.Got)
		c.Fix = "if the host was rebuilt, re-pin it deliberately: " + event.Run("hostkey", "forget", in.node.Name) + "; otherwise do not connect and investigate"
	case !in.hostReached():
		return in.hostUnknown(c)
	case in.node.HostKeyPinned:
		c.Status, c.Detail = diagnosis.CheckOK, "the host presented its pinned key"
	default:
		c.Status = diagnosis.CheckOK
		c.Detail = "the host presented the key pinned on first use; the node has no " + config.HostKeyAnnotation + " annotation yet (WMCO adds it when it configures the node)"
	}
	return c
}

// annotationFingerprint is the SHA256 fingerprint of a base64 wire-form key, "" when absent or unreadable.
func annotationFingerprint(b64 string) string {
	if b64 == "" {
		return ""
	}
	wire, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "(unreadable annotation)"
	}
	key, err := ssh.ParsePublicKey(wire)
	if err != nil {
		return "(unreadable annotation)"
	}
	return ssh.FingerprintSHA256(key)
}

func (in triageInput) services() []diagnosis.Check {
	svcs := platformServices(in.snap.Cluster.Platform)
	if in.hostReached() && in.host.statesErr == nil && len(in.host.states) == 0 {
		c := diagnosis.Check{ID: "services", Title: "WMCO services", Status: diagnosis.CheckFail, Rank: rankServicesMissing,
			Detail: "none of WMCO's services is installed: WMCO never configured this host, or its configuration was removed",
			Fix: "let WMCO configure it: for a Machine, read the operator's log (oc logs -n " + config.OperatorNamespace +
				" deployment/" + config.OperatorName + "); for BYOH, check this address's entry in the " + config.BYOHConfigMap + " ConfigMap"}
		for _, s := range svcs {
			c.Evidence = append(c.Evidence, s.Name+": missing")
		}
		return []diagnosis.Check{c}
	}
	out := make([]diagnosis.Check, 0, len(svcs))
	for _, s := range svcs {
		out = append(out, in.service(s))
	}
	return out
}

func (in triageInput) service(s config.WindowsService) diagnosis.Check {
	c := diagnosis.Check{ID: "service:" + s.Name, Title: "Service " + s.Name, Service: s.Name, Rank: rankServices + serviceRank(s.Name)}
	switch {
	case !in.hostReached():
		return in.hostUnknown(c)
	case in.host.statesErr != nil:
		c.Status, c.Detail = diagnosis.CheckUnknown, "cannot read the services' states: "+in.host.statesErr.Error()
		c.Fix = "check again (" + in.again() + "); if it persists, check that PowerShell is the host's default shell"
		return c
	}
	for _, d := range s.DependsOn {
		c.Evidence = append(c.Evidence, fmt.Sprintf("depends on %s (%s)", d, stateWord(in.host.states, d)))
	}
	state, installed := in.host.states[s.Name]
	role := serviceRoles[s.Name]
	switch {
	case !installed && s.Name == wicd && strings.HasPrefix(in.node.WMCOVersion, config.StandaloneVersionPrefix):
		c.Status, c.Detail = diagnosis.CheckOK, "not installed, as expected: wmcon configured this node without WMCO, whose daemon it is"
	case !installed:
		c.Status, c.Detail = diagnosis.CheckFail, "not installed on the host: "+role
		c.Fix = "WMCO installs it when it configures the node: have WMCO reconfigure it by removing the version annotation " +
			"(oc annotate node " + in.node.Name + " " + config.VersionAnnotation + "-)"
	case state == remote.ServiceRunning:
		c.Status, c.Detail = diagnosis.CheckOK, "running"
	case state == remote.ServiceStartPending:
		c.Status, c.Detail = diagnosis.CheckWarn, "starting"
		c.Fix = "check again in a moment (" + in.again() + "); if it stays starting, read its log: " + event.RunLogs(in.node.Name, s.Name)
	case state == remote.ServiceStopped || state == remote.ServiceStopPending:
		c.Status, c.Detail, c.Restartable = diagnosis.CheckFail, "stopped: "+role, true
		c.Fix = "start it: " + event.Run("restart-service", in.node.Name, s.Name) + "; if it stops again, read its log: " + event.RunLogs(in.node.Name, s.Name)
	default:
		c.Status, c.Detail = diagnosis.CheckWarn, "in state "+string(state)
		c.Fix = "check again (" + in.again() + "); if it stays so, read its log: " + event.RunLogs(in.node.Name, s.Name)
	}
	return c
}

func serviceRank(name string) int {
	for i, n := range serviceRanks {
		if n == name {
			return i
		}
	}
	return len(serviceRanks)
}

func stateWord(states map[string]remote.ServiceState, name string) string {
	if st, ok := states[name]; ok {
		return string(st)
	}
	return "missing"
}

func (in triageInput) condition(kind string) (model.Condition, bool) {
	for _, c := range in.node.Conditions {
		if c.Type == kind {
			return c, true
		}
	}
	return model.Condition{}, false
}

func (in triageInput) conditionLine(c model.Condition) string {
	s := c.Type + "=" + c.Status
	if c.Reason != "" {
		s += " " + c.Reason
	}
	if since := in.since(c.LastTransitionTime); since != "" {
		s += " " + since
	}
	if c.Message != "" {
		s += ": " + c.Message
	}
	return s
}

// since renders "since 2026-03-01 12:00:00 UTC (3m ago)"; "" for an unknown time.
func (in triageInput) since(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return "since " + t.UTC().Format("2006-01-02 15:04:05 UTC") + " (" + shortAge(in.now.Sub(t)) + " ago)"
}

func shortAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(0, int(d.Seconds())))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func (in triageInput) nodeReady() diagnosis.Check {
	c := diagnosis.Check{ID: "node-ready", Title: "Node Ready", Rank: rankNodeReady}
	for _, cond := range in.node.Conditions {
		c.Evidence = append(c.Evidence, in.conditionLine(cond))
	}
	ready, ok := in.condition("Ready")
	switch {
	case !ok:
		c.Status, c.Detail = diagnosis.CheckFail, "the node has no Ready condition: its kubelet never reported"
		c.Fix = "check the kubelet service and its log (" + event.RunLogs(in.node.Name, "kubelet") + "), and that the kubelet could join (its CSRs approved)"
	case ready.Status == "True":
		c.Status, c.Detail = diagnosis.CheckOK, "Ready "+in.since(ready.LastTransitionTime)
	default:
		c.Status = diagnosis.CheckFail
		c.Detail = strings.TrimSpace("Ready is " + ready.Status + " (" + ready.Reason + ") " + in.since(ready.LastTransitionTime))
		if ready.Message != "" {
			c.Detail += ": " + ready.Message
		}
		c.Fix = "look at the host first: SSH, the kubelet and containerd services and the kubelet's errors; " +
			"if the host is fine, the node's network (hybrid overlay) is next"
	}
	return c
}

var pressureConditions = []string{"MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"}

func (in triageInput) pressure() diagnosis.Check {
	c := diagnosis.Check{ID: "node-pressure", Title: "Resource pressure", Rank: rankPressure, Status: diagnosis.CheckOK,
		Detail: "no memory, disk or PID pressure"}
	var active []string
	for _, kind := range pressureConditions {
		if cond, ok := in.condition(kind); ok && cond.Status == "True" {
			active = append(active, kind)
			c.Evidence = append(c.Evidence, in.conditionLine(cond))
		}
	}
	if len(active) > 0 {
		c.Status, c.Detail = diagnosis.CheckWarn, strings.Join(active, ", ")+": the kubelet evicts pods and refuses new ones"
		c.Fix = "free disk (container images, C:\\var\\log) or memory on the host, or move workloads off the node"
	}
	return c
}

// expectedTaints are taints a healthy cordoned or uncordoned Windows node carries.
var expectedTaints = map[string]bool{"os=Windows:NoSchedule": true, "node.kubernetes.io/unschedulable:NoSchedule": true}

func (in triageInput) scheduling() diagnosis.Check {
	c := diagnosis.Check{ID: "scheduling", Title: "Scheduling", Rank: rankScheduling, Status: diagnosis.CheckOK, Detail: "schedulable"}
	var unexpected []string
	hasWindowsTaint := false
	for _, t := range in.node.Taints {
		c.Evidence = append(c.Evidence, "taint "+t)
		hasWindowsTaint = hasWindowsTaint || t == "os=Windows:NoSchedule"
		if !expectedTaints[t] {
			unexpected = append(unexpected, t)
		}
	}
	switch {
	case in.node.Unschedulable:
		c.Status, c.Detail = diagnosis.CheckWarn, "cordoned (SchedulingDisabled): no new pods are scheduled here"
		c.Fix = "once the node is healthy, uncordon it: " + event.Run("uncordon", in.node.Name)
	case len(unexpected) > 0:
		c.Status, c.Detail = diagnosis.CheckWarn, "tainted "+strings.Join(unexpected, ", ")+": pods without a matching toleration stay away"
		c.Fix = "node.kubernetes.io/* taints follow the node's conditions and clear when it recovers; remove others with oc adm taint nodes " + in.node.Name + " KEY-"
	case !hasWindowsTaint:
		c.Status, c.Detail = diagnosis.CheckWarn, "no os=Windows:NoSchedule taint: Linux pods may be scheduled here and fail"
		c.Fix = "restore it: oc adm taint nodes " + in.node.Name + " os=Windows:NoSchedule"
	}
	return c
}

func (in triageInput) rebootRequired() diagnosis.Check {
	c := diagnosis.Check{ID: "reboot-required", Title: "Reboot pending", Rank: rankRebootRequired, Status: diagnosis.CheckOK, Detail: "no reboot pending"}
	if in.node.RebootRequired {
		c.Status = diagnosis.CheckWarn
		c.Detail = "WMCO marked the node " + config.RebootRequiredAnnotation + ": a change (proxy settings, configuration) waits for a reboot"
		c.Fix = "WMCO reboots it itself when it can; to do it now with cordon and drain, " + event.Run("reboot", in.node.Name)
	}
	return c
}

func (in triageInput) wmcoVersion() diagnosis.Check {
	op, nv := in.snap.Cluster.WMCOVersion, in.node.WMCOVersion
	c := diagnosis.Check{ID: "wmco-version", Title: "WMCO version", Rank: rankWMCOVersion,
		Evidence: []string{"node annotation: " + event.OrNone(nv), "operator: " + event.OrNone(op)}}
	if in.node.DesiredVersion != "" {
		c.Evidence = append(c.Evidence, "desired: "+in.node.DesiredVersion)
	}
	switch {
	case op == "":
		c.Status, c.Detail = diagnosis.CheckUnknown, "the operator's version is unknown: WMCO's ClusterServiceVersion is not visible (not installed, or not readable)"
		c.Fix = "install WMCO (namespace " + config.OperatorNamespace + ") or get read access to its ClusterServiceVersion"
	case nv == "":
		c.Status, c.Detail = diagnosis.CheckWarn, "the node has no version annotation: WMCO has not finished configuring it"
		c.Fix = "read the operator's log: oc logs -n " + config.OperatorNamespace + " deployment/" + config.OperatorName
	case in.node.Upgrading:
		c.Status, c.Detail = diagnosis.CheckWarn, "WMCO is reconfiguring the node now (upgrading label)"
		c.Fix = "wait: WMCO upgrades one node at a time"
	case !cluster.SameOperatorVersion(nv, op) && in.node.DriftPickedUp:
		c.Status, c.Detail = diagnosis.CheckWarn, "version drift: the node was configured by WMCO "+nv+", the operator is "+op+"; WMCO has taken it up (desired-version "+in.node.DesiredVersion+")"
		c.Fix = "WMCO reconfigures drifted nodes one at a time; if this one never moves, read the operator's log: oc logs -n " + config.OperatorNamespace + " deployment/" + config.OperatorName
	case !cluster.SameOperatorVersion(nv, op):
		c.Status, c.Detail = diagnosis.CheckWarn, "version drift: the node was configured by WMCO "+nv+", the operator is "+op+", and the operator has not picked the node up yet (desired-version "+event.OrNone(in.node.DesiredVersion)+")"
		c.Fix = "read the operator's log for this node: oc logs -n " + config.OperatorNamespace + " deployment/" + config.OperatorName
	default:
		c.Status, c.Detail = diagnosis.CheckOK, "configured by the running operator ("+nv+")"
	}
	return c
}

func (in triageInput) kubeVersion() diagnosis.Check {
	op := in.snap.Cluster.WMCOVersion
	c := diagnosis.Check{ID: "kubernetes-version", Title: "Kubernetes version", Rank: rankKubeVersion,
		Evidence: []string{"kubelet: " + event.OrNone(in.node.KubeletVersion), "cluster: " + event.OrNone(in.snap.Cluster.KubernetesVersion)}}
	lo, hi, ok := config.KubernetesWindow(op)
	if !ok {
		c.Status, c.Detail = diagnosis.CheckUnknown, "no known supported Kubernetes window for operator version "+event.OrNone(op)
		c.Fix = "compare the versions with the WMCO release notes"
		return c
	}
	window := fmt.Sprintf("v1.%d–v1.%d", lo, hi)
	if lo == hi {
		window = fmt.Sprintf("v1.%d", lo)
	}
	c.Evidence = append(c.Evidence, "WMCO "+op+" supports "+window)
	for _, v := range []string{in.node.KubeletVersion, in.snap.Cluster.KubernetesVersion} {
		major, minor, ok := config.MajorMinor(v)
		if ok && (major != 1 || minor < lo || minor > hi) {
			c.Status = diagnosis.CheckFail
			c.Detail = "Kubernetes " + v + " is outside WMCO " + op + "'s supported window " + window
			c.Fix = "upgrade WMCO together with the cluster (each WMCO release supports the matching OpenShift release)"
			return c
		}
	}
	c.Status, c.Detail = diagnosis.CheckOK, "within WMCO "+op+"'s window "+window
	return c
}

func (in triageInput) networkType() diagnosis.Check {
	c := diagnosis.Check{ID: "network-type", Title: "Cluster network type", Rank: rankNetworkType}
	t := in.snap.Cluster.NetworkType
	if t == "" && in.extra.networkErr == nil {
		t = in.extra.network.Type
	}
	switch t {
	case "":
		c.Status, c.Detail = diagnosis.CheckUnknown, "the cluster's network type is unknown (network.config.openshift.io/cluster not readable)"
		c.Fix = "check it with oc get network.config cluster -o jsonpath='{.spec.networkType}'"
	case "OVNKubernetes":
		c.Status, c.Detail = diagnosis.CheckOK, "OVNKubernetes"
	case "OpenShiftSDN":
		c.Status, c.Detail = diagnosis.CheckFail, "OpenShift SDN is not supported with Windows nodes: WMCO needs OVNKubernetes with hybrid overlay"
		c.Fix = "migrate the cluster network to OVN-Kubernetes (a cluster-wide change), then configure hybrid overlay networking"
	default:
		c.Status, c.Detail = diagnosis.CheckFail, "network type "+t+" is not supported for Windows nodes: WMCO needs OVNKubernetes with hybrid overlay"
		c.Fix = "Windows nodes need OVN-Kubernetes with hybrid overlay networking"
	}
	return c
}

func (in triageInput) clusterCIDR() diagnosis.Check {
	c := diagnosis.Check{ID: "cluster-network-cidr", Title: "Cluster network CIDRs", Rank: rankClusterCIDR}
	if u, ok := in.networkUnknown(c); ok {
		return u
	}
	var bad []string
	all := append(append([]string(nil), in.extra.network.ClusterNetworks...), in.extra.network.HybridClusterNetworks...)
	for _, cidr := range all {
		c.Evidence = append(c.Evidence, cidr)
		if ip, _, err := net.ParseCIDR(cidr); err == nil && config.ClassE.Contains(ip) {
			bad = append(bad, cidr)
		}
	}
	if len(bad) > 0 {
		c.Status, c.Detail = diagnosis.CheckFail, "class E (240.0.0.0/4) cluster network CIDRs do not work with Windows nodes: "+strings.Join(bad, ", ")
		c.Fix = "Windows cannot route class E addresses: the cluster network must use other ranges (an install-time choice)"
		return c
	}
	c.Status, c.Detail = diagnosis.CheckOK, "no class E ranges"
	return c
}

// networkUnknown fills c when the network configuration could not be read.
func (in triageInput) networkUnknown(c diagnosis.Check) (diagnosis.Check, bool) {
	switch {
	case !in.extra.configured:
		c.Status, c.Detail, c.Fix = diagnosis.CheckUnknown, "not checked: no cluster reads configured", "run with a cluster connection"
	case in.extra.networkErr != nil:
		c.Status, c.Detail = diagnosis.CheckUnknown, "cannot read the network configuration: "+in.extra.networkErr.Error()
		c.Fix = "check that you may read network.config.openshift.io and network.operator.openshift.io"
	default:
		return c, false
	}
	return c, true
}

func (in triageInput) isWindows2019() bool {
	return strings.HasPrefix(in.node.WindowsBuild, "10.0.17763") || strings.Contains(in.node.OSImage, "2019")
}

func (in triageInput) hybridOverlay() diagnosis.Check {
	c := diagnosis.Check{ID: "hybrid-overlay", Title: "Hybrid overlay networking", Rank: rankHybridOverlay}
	if u, ok := in.networkUnknown(c); ok {
		return u
	}
	n := in.extra.network
	port := n.VXLANPort
	if port != 0 {
		c.Evidence = append(c.Evidence, fmt.Sprintf("hybridOverlayVXLANPort: %d", port))
	}
	custom := port != 0 && port != 4789
	switch {
	case !n.OperatorFound:
		c.Status, c.Detail = diagnosis.CheckUnknown, "network.operator.openshift.io/cluster not found: hybrid overlay settings unknown"
		c.Fix = "check it with oc get network.operator cluster -o yaml"
	case !n.HybridOverlay || len(n.HybridClusterNetworks) == 0:
		c.Status, c.Detail = diagnosis.CheckFail, "hybrid overlay networking is not configured (hybridClusterNetwork is empty): Windows pods get no network"
		c.Fix = "configure spec.defaultNetwork.ovnKubernetesConfig.hybridOverlayConfig.hybridClusterNetwork on network.operator.openshift.io/cluster"
	case custom && in.isWindows2019():
		c.Status = diagnosis.CheckFail
		c.Detail = fmt.Sprintf("Windows Server 2019 does not support a custom VXLAN port (hybridOverlayVXLANPort %d)", port)
		c.Fix = "use Windows Server 2022 or later for this node, or the default VXLAN port where the platform allows it"
	case !custom && strings.EqualFold(in.snap.Cluster.Platform, "VSphere"):
		c.Status, c.Detail = diagnosis.CheckWarn, "vSphere needs a custom hybridOverlayVXLANPort (the default 4789 collides with vSphere's own VXLAN)"
		c.Fix = "set hybridOverlayVXLANPort (for example 9898) on network.operator.openshift.io/cluster"
	default:
		c.Status, c.Detail = diagnosis.CheckOK, "configured: "+strings.Join(n.HybridClusterNetworks, ", ")
	}
	return c
}

func (in triageInput) metadataRoute() diagnosis.Check {
	c := diagnosis.Check{ID: "metadata-route", Title: "EC2 metadata route", Rank: rankMetadataRoute}
	switch {
	case !in.hostReached():
		return in.hostUnknown(c)
	case in.host.routeErr != nil:
		c.Status, c.Detail, c.Fix = diagnosis.CheckUnknown, "cannot read the routes: "+in.host.routeErr.Error(), "check again: "+in.again()
	case !in.host.routeExists:
		c.Status = diagnosis.CheckFail
		c.Detail = "the route to the EC2 metadata service (" + config.EC2MetadataIP + "/32) is missing: the kubelet and the ECR credential provider cannot reach instance metadata"
		c.Fix = "reboot it (" + event.Run("reboot", in.node.Name) + ": it adds the route back after the reboot), or on the host: route add " +
			config.EC2MetadataIP + " mask " + config.EC2MetadataMask + " <default gateway>"
	default:
		c.Status, c.Detail = diagnosis.CheckOK, "present"
	}
	return c
}

// klogError matches a klog error line: E followed by mmdd hh:mm:ss.
var klogError = regexp.MustCompile(`^E\d{4} \d{2}:\d{2}:\d{2}`)

const maxEvidenceLines = 5

func (in triageInput) kubeletErrors() diagnosis.Check {
	svc, _ := config.ServiceByName("kubelet")
	c := diagnosis.Check{ID: "kubelet-errors", Title: "Kubelet errors", Service: "kubelet", Rank: rankKubeletErrors}
	switch {
	case !in.hostReached():
		return in.hostUnknown(c)
	case in.host.logErr != nil && answered(in.host.logErr):
		c.Status, c.Detail = diagnosis.CheckWarn, "cannot read "+svc.LogFile+": "+in.host.logErr.Error()
		c.Fix = "the kubelet may never have started: check the kubelet service"
		return c
	case in.host.logErr != nil:
		c.Status, c.Detail, c.Fix = diagnosis.CheckUnknown, "cannot read the kubelet log: "+in.host.logErr.Error(), "check again: "+in.again()
		return c
	}
	var errs []string
	for _, l := range in.host.kubeletLog {
		if klogError.MatchString(l) {
			errs = append(errs, l)
		}
	}
	if len(errs) == 0 {
		c.Status, c.Detail = diagnosis.CheckOK, fmt.Sprintf("no errors in the last %d lines", in.logLines)
		return c
	}
	c.Status = diagnosis.CheckWarn
	c.Detail = fmt.Sprintf("%d error %s in the last %d lines of %s", len(errs), event.Plural(len(errs), "line", "lines"), in.logLines, svc.LogFile)
	for _, l := range errs[max(0, len(errs)-maxEvidenceLines):] {
		c.Evidence = append(c.Evidence, clip(l, 300))
	}
	c.Fix = "read them in context: " + event.RunLogs(in.node.Name, "kubelet")
	return c
}

// again is the command that runs the triage again.
func (in triageInput) again() string { return event.Run("triage", in.node.Name) }

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// secretsUnknown fills c when the watcher cannot see a secret.
func (in triageInput) secretsUnknown(c diagnosis.Check, res model.Resource) (diagnosis.Check, bool) {
	st, ok := in.snap.Resources[res]
	if ok && st.Availability == model.Available {
		return c, false
	}
	c.Status, c.Detail = diagnosis.CheckUnknown, "not visible: "+event.OrNone(st.Message)
	c.Fix = "get read access to WMCO's secrets to check them"
	return c, true
}

func (in triageInput) privateKey() diagnosis.Check {
	c := diagnosis.Check{ID: "private-key", Title: "SSH key (" + config.PrivateKeySecret + ")", Rank: rankPrivateKey}
	if u, ok := in.secretsUnknown(c, model.ResSecrets); ok {
		return u
	}
	k := in.snap.Secrets.PrivateKey
	if k.Fingerprint != "" {
		c.Evidence = append(c.Evidence, fmt.Sprintf("%s %d bits %s", k.Type, k.Bits, k.Fingerprint))
	}
	switch {
	case !k.Present:
		c.Status, c.Detail = diagnosis.CheckWarn, "the "+config.PrivateKeySecret+" secret is missing: WMCO cannot configure Windows nodes"
		c.Fix = "create it: oc create secret generic " + config.PrivateKeySecret + " --from-file=" + config.PrivateKeySecretKey + "=<key file> -n " + config.OperatorNamespace
	case k.Problem != "":
		c.Status, c.Detail = diagnosis.CheckFail, k.Problem
		c.Fix = "replace the secret with an unencrypted RSA (≥ 2048 bits), ECDSA or Ed25519 key"
	case k.Warning != "":
		c.Status, c.Detail = diagnosis.CheckWarn, k.Warning
		c.Fix = "replace it with an RSA key of at least 2048 bits or an Ed25519 key; WMCO then replaces the Machines"
	default:
		c.Status, c.Detail = diagnosis.CheckOK, "usable "+k.Type+" key"
	}
	return c
}

func (in triageInput) userDataKey() diagnosis.Check {
	c := diagnosis.Check{ID: "user-data-key", Title: "Key in " + config.UserDataSecret, Rank: rankUserDataKey}
	if u, ok := in.secretsUnknown(c, model.ResUserData); ok {
		return u
	}
	ud, k := in.snap.Secrets.UserData, in.snap.Secrets.PrivateKey
	if ud.KeyFingerprint != "" {
		c.Evidence = append(c.Evidence, "authorized key: "+ud.KeyFingerprint)
	}
	switch {
	case !ud.Present:
		c.Status, c.Detail = diagnosis.CheckWarn, "the "+config.UserDataSecret+" secret is missing: new Windows Machines cannot be configured"
		c.Fix = in.userDataFix("WMCO creates it from " + config.PrivateKeySecret + ": restart the operator's pod")
	case ud.MatchesKey:
		c.Status, c.Detail = diagnosis.CheckOK, "matches "+config.PrivateKeySecret
	case !k.Present || k.Problem != "":
		c.Status, c.Detail, c.Fix = diagnosis.CheckUnknown, event.OrNone(ud.Problem), "fix "+config.PrivateKeySecret+" first"
	default:
		c.Status, c.Detail = diagnosis.CheckFail, ud.Problem
		c.Fix = in.userDataFix("restart the operator so it regenerates " + config.UserDataSecret + " from " + config.PrivateKeySecret)
	}
	return c
}

// userDataFix is withWMCO when the operator is installed; standalone wmcon writes the user data itself
// when the key is installed, so that is what to run.
func (in triageInput) userDataFix(withWMCO string) string {
	if in.snap.Cluster.WMCOVersion != "" {
		return withWMCO
	}
	return "standalone (WMCO is not installed): wmcon key create --from-file PATH (the file of " + config.PrivateKeySecret + ") writes " + config.UserDataSecret + " for it"
}

func (in triageInput) events() diagnosis.Check {
	c := diagnosis.Check{ID: "events", Title: "Recent events", Rank: rankEvents}
	switch {
	case !in.extra.configured:
		c.Status, c.Detail, c.Fix = diagnosis.CheckUnknown, "not checked: no cluster reads configured", "run with a cluster connection"
		return c
	case in.extra.eventsErr != nil:
		c.Status, c.Detail = diagnosis.CheckUnknown, "cannot list events: "+in.extra.eventsErr.Error()
		c.Fix = "events need permission to list events in default and " + config.MachineAPINamespace
		return c
	}
	var warnings []cluster.EventInfo
	for _, e := range in.extra.events {
		c.Evidence = append(c.Evidence, in.eventLine(e))
		if e.Type == "Warning" {
			warnings = append(warnings, e)
		}
	}
	switch {
	case len(in.extra.events) == 0:
		c.Status, c.Detail = diagnosis.CheckOK, "no recent events for the node or its Machine"
	case len(warnings) == 0:
		c.Status, c.Detail = diagnosis.CheckOK, fmt.Sprintf("%d recent events, no warnings", len(in.extra.events))
	default:
		w := warnings[0]
		c.Status = diagnosis.CheckWarn
		c.Detail = fmt.Sprintf("%d warning %s; newest: %s: %s", len(warnings), event.Plural(len(warnings), "event", "events"), w.Reason, clip(w.Message, 200))
		c.Fix = "read the newest warnings first: they usually name the failing component"
	}
	return c
}

func (in triageInput) eventLine(e cluster.EventInfo) string {
	s := e.Time.UTC().Format("2006-01-02 15:04:05") + " " + e.Type + " " + e.Reason + " (" + e.Object + ")"
	if e.Count > 1 {
		s += fmt.Sprintf(" ×%d", e.Count)
	}
	return s + ": " + clip(e.Message, 200)
}

// windowsReleases maps build numbers to the Windows Server releases WMCO supports.
var windowsReleases = map[string]string{"17763": "Windows Server 2019", "20348": "Windows Server 2022", "26100": "Windows Server 2025"}

func (in triageInput) windowsBuild() diagnosis.Check {
	c := diagnosis.Check{ID: "windows-build", Title: "Windows Server release", Rank: rankWindowsBuild,
		Evidence: []string{"build: " + event.OrNone(in.node.WindowsBuild), "image: " + event.OrNone(in.node.OSImage)}}
	parts := strings.Split(in.node.WindowsBuild, ".")
	if len(parts) < 3 {
		c.Status, c.Detail = diagnosis.CheckUnknown, "the node has no "+config.WindowsBuildLabel+" label"
		c.Fix = "the kubelet sets it when it registers: check the kubelet"
		return c
	}
	if rel, ok := windowsReleases[parts[2]]; ok {
		c.Status, c.Detail = diagnosis.CheckOK, rel
		return c
	}
	c.Status, c.Detail = diagnosis.CheckWarn, "build "+in.node.WindowsBuild+" is not a Windows Server release WMCO supports (2019, 2022, 2025)"
	c.Fix = "use a supported Windows Server LTSC image"
	return c
}
