package demo

import (
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// answerAccessReviews answers SelfSubjectAccessReviews as the demo's API server would for its user, a
// cluster administrator: everything is allowed, except the node proxy, which the demo's API server does not
// have (node logs come over SSH instead, as they would for a user without nodes/proxy).
func answerAccessReviews(kube *kubefake.Clientset) {
	kube.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		review := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
		attrs := review.Spec.ResourceAttributes
		if attrs != nil && attrs.Resource == "nodes" && attrs.Subresource == "proxy" {
			review.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: false,
				Reason: "the demo's API server does not proxy to nodes"}
			return true, review, nil
		}
		review.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "the demo's user is a cluster administrator"}
		return true, review, nil
	})
}
