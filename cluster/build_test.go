package cluster_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
)

// TestVersionDrift: a Windows node configured by another operator version drifts; whether WMCO has taken
// it up is read from desired-version; a node not configured yet (no version annotation) is not drift.
func TestVersionDrift(t *testing.T) {
	node := func(version, desired string) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win", Labels: map[string]string{corev1.LabelOSStable: "windows"},
			Annotations: map[string]string{}}}
		if version != "" {
			n.Annotations[config.VersionAnnotation] = version
		}
		if desired != "" {
			n.Annotations[config.DesiredVersionAnnotation] = desired
		}
		return n
	}
	cases := []struct {
		name, version, desired string
		drift, pickedUp        bool
	}{
		{"in step", "10.20.0-bc9a7b1", "10.20.0-bc9a7b1", false, false},
		{"taken up", "10.19.1-0f3c2d4", "10.20.0-bc9a7b1", true, true},
		{"not picked up yet", "10.19.1-0f3c2d4", "10.19.1-0f3c2d4", true, false},
		{"no desired version", "10.19.1-0f3c2d4", "", true, false},
		{"still joining", "", "10.20.0-bc9a7b1", false, false},
	}
	for _, c := range cases {
		info := cluster.NodeInfoFrom(node(c.version, c.desired), "10.20.0")
		assert.Equal(t, c.drift, info.VersionDrift, c.name)
		assert.Equal(t, c.pickedUp, info.DriftPickedUp, c.name)
	}
}
