package cluster

import (
	"context"
	"fmt"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
)

// Permission is one verb on one resource that some wmcon feature needs.
type Permission struct {
	Verb        string
	Group       string // "" = core
	Resource    string
	Subresource string
	Namespace   string // "" = cluster-wide
	Name        string // a signer's name for "approve signers"
}

// String is how the permission reads in a report: "list machinesets.machine.openshift.io in openshift-machine-api".
func (p Permission) String() string {
	res := p.Resource
	if p.Subresource != "" {
		res += "/" + p.Subresource
	}
	if p.Group != "" {
		res += "." + p.Group
	}
	s := p.Verb + " " + res
	if p.Name != "" {
		s += " " + p.Name
	}
	if p.Namespace != "" {
		s += " in " + p.Namespace
	}
	return s
}

// Access is the API server's answer for one permission. Err is set when the question could not be asked.
type Access struct {
	Permission Permission
	Allowed    bool
	Reason     string // the authorizer's reason, when it gave one
	Err        error
}

// ReviewAccess asks the API server (one SelfSubjectAccessReview each, all at once) whether the current
// user holds each permission. Answers come back in the order asked.
func ReviewAccess(ctx context.Context, kube kubernetes.Interface, perms []Permission) []Access {
	out := make([]Access, len(perms))
	var wg sync.WaitGroup
	for i, p := range perms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = reviewOne(ctx, kube, p)
		}()
	}
	wg.Wait()
	return out
}

func reviewOne(ctx context.Context, kube kubernetes.Interface, p Permission) Access {
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: p.Verb, Group: p.Group, Resource: p.Resource,
			Subresource: p.Subresource, Namespace: p.Namespace, Name: p.Name},
	}}
	res, err := kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return Access{Permission: p, Err: fmt.Errorf("ask whether you may %s: %w", p, err)}
	}
	return Access{Permission: p, Allowed: res.Status.Allowed, Reason: res.Status.Reason}
}

// APIGroups are the API group/versions the server serves ("config.openshift.io/v1", "v1", ...).
func APIGroups(d discovery.DiscoveryInterface) (map[string]bool, error) {
	groups, err := d.ServerGroups()
	if err != nil {
		return nil, fmt.Errorf("discover the server's APIs: %w", err)
	}
	out := map[string]bool{}
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			out[v.GroupVersion] = true
		}
	}
	return out, nil
}
