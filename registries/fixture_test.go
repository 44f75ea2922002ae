package registries

import (
	"bufio"
	"bytes"
	"os"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// TestRenderOfTheDisconnectedFixture renders the shared fixture of a disconnected cluster's mirror sets
// (testdata/mirrorsets, also what the mirrors command's test reads).
func TestRenderOfTheDisconnectedFixture(t *testing.T) {
	data, err := os.ReadFile("../testdata/mirrorsets/disconnected.yaml")
	require.NoError(t, err)
	var in Input
	dec := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := dec.Read()
		if err != nil {
			break
		}
		var kind struct{ Kind string }
		require.NoError(t, utilyaml.Unmarshal(doc, &kind))
		switch kind.Kind {
		case "ImageDigestMirrorSet":
			var s configv1.ImageDigestMirrorSet
			require.NoError(t, utilyaml.Unmarshal(doc, &s))
			in.DigestMirrorSets = append(in.DigestMirrorSets, s)
		case "ImageTagMirrorSet":
			var s configv1.ImageTagMirrorSet
			require.NoError(t, utilyaml.Unmarshal(doc, &s))
			in.TagMirrorSets = append(in.TagMirrorSets, s)
		}
	}
	require.Len(t, in.DigestMirrorSets, 1)
	require.Len(t, in.TagMirrorSets, 1)

	tree, err := Render(in)
	require.NoError(t, err)
	byDir := map[string]File{}
	for _, f := range tree.Files {
		byDir[f.Dir] = f
	}
	require.Len(t, byDir, 2, "one file per source registry host")
	quay := byDir["quay.io"]
	assert.True(t, quay.NeverContactSource, "release images never come from the source")
	require.Len(t, quay.Mirrors, 1, "both release repositories share one mirror host and path")
	assert.Equal(t, "mirror.example.internal:5000", quay.Mirrors[0].Repo.Host)
	assert.False(t, quay.Mirrors[0].Resolve, "digest mirrors only pull")
	rh := byDir["registry.redhat.io"]
	assert.False(t, rh.NeverContactSource)
	require.Len(t, rh.Mirrors, 2)
	assert.Equal(t, "mirror.example.internal:5000", rh.Mirrors[0].Repo.Host, "the mirror sets' order is kept")
	assert.Equal(t, "backup-mirror.example.internal", rh.Mirrors[1].Repo.Host)
	assert.True(t, rh.Mirrors[0].Resolve, "tag mirrors also resolve")
}
