package fleet

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/config"
)

// TestNodeIsShapedLikeARealOne: the generated nodes carry what makes real Nodes big, and Windows nodes
// what WMCO sets.
func TestNodeIsShapedLikeARealOne(t *testing.T) {
	for i := range 8 {
		n := Node(i, "n", "127.0.0.1")
		assert.GreaterOrEqual(t, len(n.Status.Images), 40)
		assert.LessOrEqual(t, len(n.Status.Images), 60)
		assert.GreaterOrEqual(t, len(n.ManagedFields), 6)
		for _, m := range n.ManagedFields {
			var fields map[string]any
			require.NoError(t, json.Unmarshal(m.FieldsV1.Raw, &fields), m.Manager)
		}
		raw, err := json.Marshal(n)
		require.NoError(t, err)
		assert.Greater(t, len(raw), 10_000, "a real node is over 10 kB")
		assert.Equal(t, Windows(i), n.Labels[config.OSLabel] == "windows")
		if Windows(i) {
			assert.NotEmpty(t, n.Annotations[config.VersionAnnotation])
			assert.NotEmpty(t, n.Annotations[config.HostKeyAnnotation])
			assert.NotEmpty(t, n.Spec.Taints)
		}
		t.Logf("node %d: %d bytes of JSON", i, len(raw))
	}
}
