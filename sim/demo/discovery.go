package demo

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
)

// ServerVersion is the Kubernetes version the demo's API server reports.
const ServerVersion = "v1.37.1"

// servedAPIs are the API groups the demo's typed fakes serve beyond core, as an OpenShift cluster does.
var servedAPIs = []schema.GroupVersionResource{
	{Group: "machine.openshift.io", Version: "v1beta1", Resource: "machinesets"},
	{Group: "machine.openshift.io", Version: "v1beta1", Resource: "machines"},
	{Group: "config.openshift.io", Version: "v1", Resource: "infrastructures"},
	{Group: "config.openshift.io", Version: "v1", Resource: "networks"},
	{Group: "config.openshift.io", Version: "v1", Resource: "proxies"},
	{Group: "config.openshift.io", Version: "v1", Resource: "clusterversions"},
	{Group: "config.openshift.io", Version: "v1", Resource: "imagedigestmirrorsets"},
	{Group: "config.openshift.io", Version: "v1", Resource: "imagetagmirrorsets"},
}

// serveDiscovery makes the fake clientset's discovery answer as the demo's API server would: its version,
// and every API the demo's clients serve (the typed fakes' and those of the dynamic client, whose list
// kinds are given). The watcher then asks the demo what exists exactly as it asks a real cluster.
func serveDiscovery(kube *kubefake.Clientset, dynamicKinds map[schema.GroupVersionResource]string) discovery.DiscoveryInterface {
	apis := append([]schema.GroupVersionResource(nil), servedAPIs...)
	for gvr := range dynamicKinds {
		apis = append(apis, gvr)
	}
	byGroup := map[string]*metav1.APIResourceList{}
	for _, gvr := range apis {
		gv := gvr.GroupVersion().String()
		l := byGroup[gv]
		if l == nil {
			l = &metav1.APIResourceList{GroupVersion: gv}
			byGroup[gv] = l
		}
		l.APIResources = append(l.APIResources, metav1.APIResource{Name: gvr.Resource, Group: gvr.Group, Version: gvr.Version})
	}
	gvs := make([]string, 0, len(byGroup))
	for gv := range byGroup {
		gvs = append(gvs, gv)
	}
	sort.Strings(gvs)
	for _, gv := range gvs {
		kube.Resources = append(kube.Resources, byGroup[gv])
	}
	d := kube.Discovery().(*fakediscovery.FakeDiscovery)
	d.FakedServerVersion = &version.Info{Major: "1", Minor: "37", GitVersion: ServerVersion}
	return d
}
