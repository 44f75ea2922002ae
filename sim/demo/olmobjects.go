package demo

import (
	"time"

	olm "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
)

// operatorOLMObjects are the OperatorGroup and the Subscription an OLM install of WMCO leaves behind
// (besides the CSV, operatorCSV), so the demo's operator reads as installed the way a cluster's does: the
// Operator view and operator status show them present, the Subscription at its latest CSV.
func operatorOLMObjects(now time.Time) []runtime.Object {
	created := metav1.NewTime(now.Add(-9 * 24 * time.Hour))
	group := cluster.OperatorGroupObject()
	group.CreationTimestamp = created
	opts, _ := cluster.InstallOptions{}.Defaults() // the defaults are valid
	sub := cluster.SubscriptionObject(opts)
	sub.CreationTimestamp = created
	csv := config.OperatorName + ".v" + OperatorVersion
	sub.Status = olm.SubscriptionStatus{State: olm.SubscriptionStateAtLatest, CurrentCSV: csv, InstalledCSV: csv,
		LastUpdated: created}
	var out []runtime.Object
	for _, o := range []runtime.Object{group, sub} {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			panic("demo: an OLM object does not convert: " + err.Error()) // fixed objects: a bug here, not input
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
}
