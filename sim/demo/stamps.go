package demo

import (
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	k8stesting "k8s.io/client-go/testing"
)

// fakeClientset is what the demo's fake clientsets (core, machine) share: reactors over an object tracker.
type fakeClientset interface {
	PrependReactor(verb, resource string, reaction k8stesting.ReactionFunc)
	Tracker() k8stesting.ObjectTracker
}

// stampCreates makes a fake clientset give every object it creates a creation time and a UID, as the API
// server does: client-go's fake stores objects as given, so a node that joined the demo had no AGE.
// Registered before every other reactor, it runs last of them, just before the tracker stores the object.
func stampCreates(c fakeClientset, now func() metav1.Time) {
	store := k8stesting.ObjectReaction(c.Tracker())
	c.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		create, ok := a.(k8stesting.CreateActionImpl)
		if !ok || create.GetSubresource() != "" {
			return false, nil, nil
		}
		obj := create.GetObject().DeepCopyObject() // the caller's object stays as it was, as over the wire
		m, err := apimeta.Accessor(obj)
		if err != nil {
			return false, nil, nil
		}
		if ts := m.GetCreationTimestamp(); ts.IsZero() {
			m.SetCreationTimestamp(now())
		}
		if m.GetUID() == "" {
			m.SetUID(uuid.NewUUID())
		}
		create.Object = obj
		return store(create)
	})
}
