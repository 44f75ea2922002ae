package cluster_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

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

// TestNodeInfoFromAWSWindowsNodeFixture reads the Node WMCO leaves on AWS (testdata/cluster) as the console
// shows it: a Ready Windows worker of its Machine, host key pinned, one operator release behind.
func TestNodeInfoFromAWSWindowsNodeFixture(t *testing.T) {
	b, err := os.ReadFile("../testdata/cluster/aws-windows-node.yaml")
	require.NoError(t, err)
	var n corev1.Node
	require.NoError(t, yaml.Unmarshal(b, &n))
	info := cluster.NodeInfoFrom(&n, "10.20.1")
	assert.True(t, info.Windows)
	assert.Equal(t, "10.0.20348", info.WindowsBuild)
	assert.Equal(t, "openshift-machine-api/ci-ln-x7k2p-windows-us-east-2a-7q9zk", info.Machine)
	assert.Equal(t, "127.0.143.7", info.InternalIP)
	assert.Equal(t, []string{"worker"}, info.Roles)
	assert.True(t, info.HostKeyPinned)
	assert.False(t, info.BYOH)
	assert.Equal(t, "7", info.BootID)
	assert.Equal(t, "Ready", info.Status.Word())
	assert.True(t, info.VersionDrift, "configured by 10.19.0, the operator is 10.20.1")
	assert.False(t, info.DriftPickedUp, "no desired-version: WMCO has not taken it up")
}
