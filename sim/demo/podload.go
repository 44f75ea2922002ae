package demo

import (
	"context"
	"hash/fnv"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/sim/kubelet"
	"github.com/wmcon/wmcon/sim/windows"
)

// The demo's pods tell three stories in `wmcon --demo top pods -A` and the console: on the node pinned at
// full CPU one pod uses most of the cores; on the node short of memory one pod holds most of it; and an
// IIS pod leaks memory towards its limit, so it is marked near the limit after a minute or two and its
// sparkline keeps climbing until the limit stops it.
const (
	leakingPod       = "iis-frontend-2"
	cpuHogPod        = "dotnet-api-3"
	memoryHogPod     = "dotnet-api-5"
	leakBytesPerSec  = 256 << 10 // a quarter MiB a second
	leakStartPercent = 0.88      // of its limit
)

// appResources are the demo apps' requests and limits, as their Deployments give them.
func appResources(app string) corev1.ResourceRequirements {
	q := resource.MustParse
	switch app {
	case "iis-frontend": // Guaranteed-style limits: the leak runs into them
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("256Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: q("1"), corev1.ResourceMemory: q("1Gi")}}
	case "dotnet-api": // requests only: it may take what the node has
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: q("250m"), corev1.ResourceMemory: q("512Mi")}}
	case "sql":
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: q("1"), corev1.ResourceMemory: q("4Gi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("6Gi")}}
	}
	return corev1.ResourceRequirements{}
}

// podLoad is the work a demo pod's container does.
func podLoad(pod, app string) windows.ContainerLoad {
	mi := func(n float64) float64 { return n * (1 << 20) }
	switch {
	case pod == leakingPod:
		limit := mi(1024)
		return windows.ContainerLoad{CPUCores: 0.14, MemoryBytes: leakStartPercent * limit, MemoryGrowthBytesPS: leakBytesPerSec,
			MemoryCapBytes: limit, RxBytesPS: 3.1e5, TxBytesPS: 9e5}
	case pod == cpuHogPod:
		return windows.ContainerLoad{CPUCores: 3.1, MemoryBytes: mi(1150), RxBytesPS: 2.4e6, TxBytesPS: 4e5}
	case pod == memoryHogPod:
		return windows.ContainerLoad{CPUCores: 0.3, MemoryBytes: mi(9216), RxBytesPS: 1.2e5, TxBytesPS: 5e4}
	case app == "iis-frontend":
		return windows.ContainerLoad{CPUCores: 0.12, MemoryBytes: mi(310), MemoryCapBytes: mi(1024), RxBytesPS: 2.5e5, TxBytesPS: 7e5}
	case app == "dotnet-api":
		return windows.ContainerLoad{CPUCores: 0.25, MemoryBytes: mi(620), RxBytesPS: 9e4, TxBytesPS: 6e4}
	case app == "sql":
		return windows.ContainerLoad{CPUCores: 0.6, MemoryBytes: mi(4900), MemoryCapBytes: mi(6144), RxBytesPS: 4e5, TxBytesPS: 1.5e6}
	}
	return windows.ContainerLoad{CPUCores: 0.02, MemoryBytes: mi(60)}
}

// withContainers gives a demo pod its resources and its containers' IDs, as the kubelet reported them.
func withContainers(p *corev1.Pod) {
	for i := range p.Spec.Containers {
		p.Spec.Containers[i].Resources = appResources(p.Labels["app"])
	}
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		cs.ContainerID = "containerd://" + kubelet.ContainerID(string(p.UID), cs.Name)
	}
}

// startWorkloads runs the containers of the demo's running pods on their hosts, each with its story's
// load, and takes their share out of each host's own load so that the node's figures stay the ones
// demoLoad gave it (the containers' work is part of the node's).
func (c *Cluster) startWorkloads(ctx context.Context) error {
	pods, err := c.kube.CoreV1().Pods(appsNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		h := c.Hosts[p.Spec.NodeName]
		if h == nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, ct := range p.Spec.Containers {
			h.StartContainer(windows.Container{ID: kubelet.ContainerID(string(p.UID), ct.Name), Namespace: p.Namespace, Pod: p.Name,
				PodUID: string(p.UID), Name: ct.Name}, podLoad(p.Name, p.Labels["app"]))
		}
	}
	for _, h := range c.Hosts {
		h.SetLoad(less(h.Load(), containerShare(h)))
	}
	return nil
}

// containerShare is the work the host's containers do now, as shares of the host's (a Load).
func containerShare(h *windows.Host) windows.Load {
	var l windows.Load
	for _, s := range h.ContainerStats() {
		l.CPUBusy += s.Load.CPUCores / h.Cores()
		l.MemoryUsed += s.MemoryBytes / h.MemoryBytes()
		l.RxBytesPS += s.Load.RxBytesPS
		l.TxBytesPS += s.Load.TxBytesPS
	}
	return l
}

// totalLoad is a host's load with its containers' work counted in: what its node's figures show.
func totalLoad(h *windows.Host) windows.Load {
	l, c := h.Load(), containerShare(h)
	l.CPUBusy += c.CPUBusy
	l.MemoryUsed += c.MemoryUsed
	l.RxBytesPS += c.RxBytesPS
	l.TxBytesPS += c.TxBytesPS
	return l
}

// less is total without the containers' work c: the host's own load, never below a trickle, so the
// node's figures stay total's.
func less(total, c windows.Load) windows.Load {
	return windows.Load{CPUBusy: clampShare(total.CPUBusy - c.CPUBusy), MemoryUsed: clampShare(total.MemoryUsed - c.MemoryUsed),
		RxBytesPS: max(total.RxBytesPS-c.RxBytesPS, 0.05*total.RxBytesPS), TxBytesPS: max(total.TxBytesPS-c.TxBytesPS, 0.05*total.TxBytesPS)}
}

// ownShare moves each demo container's CPU around its story's figure at phase, and returns the host's own
// load that, with them, makes total's CPU; the host's own memory stays (a leak adds to the node's).
func ownShare(h *windows.Host, total windows.Load, phase float64) windows.Load {
	for _, s := range h.ContainerStats() {
		if s.Namespace != appsNamespace {
			continue
		}
		story := podLoad(s.Pod, appOf(s.Pod))
		if s.Load.RxBytesPS != story.RxBytesPS { // the kubelet restarted it (a reboot) with its default load
			_ = h.SetContainerLoad(s.ID, story)
		}
		f := fnv.New32a()
		_, _ = f.Write([]byte(s.Pod))
		p := phase + float64(f.Sum32()%628)/100
		_ = h.SetContainerCPU(s.ID, story.CPUCores*(1+0.15*math.Sin(p)+0.05*math.Sin(3.1*p)))
	}
	own := less(total, containerShare(h))
	own.MemoryUsed = h.Load().MemoryUsed
	return own
}

// appOf is a demo pod's app: its name without the node suffix ("dotnet-api-3" → "dotnet-api").
func appOf(pod string) string {
	for _, app := range []string{"iis-frontend", "dotnet-api", "sql"} {
		if len(pod) > len(app) && pod[:len(app)] == app {
			return app
		}
	}
	return ""
}

func clampShare(v float64) float64 { return min(max(v, 0.01), 1) }
