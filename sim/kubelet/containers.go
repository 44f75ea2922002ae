package kubelet

import (
	"hash/fnv"

	corev1 "k8s.io/api/core/v1"

	"github.com/wmcon/wmcon/sim/windows"
)

// ContainerHost is a host whose containerd the kubelet drives (windows.Host and windows.Process are):
// the containers of the pods it runs start there, and stop when their pods are gone, so the host's
// windows_exporter and the kubelet's summary API report exactly the running pods.
type ContainerHost interface {
	StartContainer(c windows.Container, l windows.ContainerLoad)
	StopContainer(id string)
	ContainerStats() []windows.ContainerStat
}

// ContainerID is the ID containerd gives a pod's container in the simulation (64 hex digits); the pod's
// status carries it as "containerd://" + ContainerID.
func ContainerID(podUID, container string) string { return digest(podUID + "/" + container) }

// runOnHost makes sure the containers of a running pod run on the host (a no-op for those that do).
func runOnHost(h PodHost, p *corev1.Pod) {
	ch, ok := h.(ContainerHost)
	if !ok {
		return
	}
	for _, c := range p.Spec.Containers {
		ch.StartContainer(windows.Container{ID: ContainerID(string(p.UID), c.Name), Namespace: p.Namespace, Pod: p.Name,
			PodUID: string(p.UID), Name: c.Name}, defaultLoad(p, c))
	}
}

// defaultLoad is the work a container the kubelet starts does: a share of what it requests (a container
// without requests idles), never past its memory limit, with a little spread so that pods differ.
func defaultLoad(p *corev1.Pod, c corev1.Container) windows.ContainerLoad {
	h := fnv.New32a()
	_, _ = h.Write([]byte(p.Namespace + "/" + p.Name + "/" + c.Name))
	spread := 0.8 + 0.4*float64(h.Sum32()%1000)/1000 // 0.8..1.2
	l := windows.ContainerLoad{CPUCores: 0.01 * spread, MemoryBytes: 40 << 20 * spread, RxBytesPS: 2e3 * spread, TxBytesPS: 1e3 * spread}
	if cpu := c.Resources.Requests.Cpu(); !cpu.IsZero() {
		l.CPUCores = 0.3 * cpu.AsApproximateFloat64() * spread
	}
	if mem := c.Resources.Requests.Memory(); !mem.IsZero() {
		l.MemoryBytes = 0.6 * mem.AsApproximateFloat64() * spread
	}
	if limit := c.Resources.Limits.Memory(); !limit.IsZero() {
		l.MemoryCapBytes = limit.AsApproximateFloat64()
		l.MemoryBytes = min(l.MemoryBytes, l.MemoryCapBytes)
	}
	return l
}

// reapContainers stops the host's containers whose pods no longer run here (deleted, evicted, ended),
// as the kubelet's housekeeping kills orphaned containers; pods are the node's pods the kubelet knows.
func reapContainers(h PodHost, pods []any) {
	ch, ok := h.(ContainerHost)
	if !ok {
		return
	}
	live := map[string]bool{}
	for _, obj := range pods {
		if p, ok := obj.(*corev1.Pod); ok && p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			live[string(p.UID)] = true
		}
	}
	for _, s := range ch.ContainerStats() {
		if !live[s.PodUID] {
			ch.StopContainer(s.ID)
		}
	}
}
