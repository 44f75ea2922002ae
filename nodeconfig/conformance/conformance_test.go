package conformance

import (
	"path"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Judge reports what no entry allows and the entries (for the artifacts compared) that allow nothing found;
// entries for artifacts not compared are another test's business.
func TestJudgeFindsUnlistedAndStale(t *testing.T) {
	entries := []Entry{
		{Artifact: "userdata/*", Field: "password", Reason: "r"},
		{Artifact: "userdata/aws", Field: "gone", Reason: "r"},
		{Artifact: "services/*", Field: "path", Reason: "r"},
	}
	found := []Difference{
		{Artifact: "userdata/azure", Field: "password"},
		{Artifact: "userdata/aws", Field: "ports"},
	}
	unlisted, stale := Judge(entries, []string{"userdata/aws", "userdata/azure"}, found)
	assert.Equal(t, []Difference{{Artifact: "userdata/aws", Field: "ports"}}, unlisted)
	assert.Equal(t, []Entry{{Artifact: "userdata/aws", Field: "gone", Reason: "r"}}, stale)

	unlisted, stale = Judge(entries, []string{"services/aws"}, nil)
	assert.Empty(t, unlisted)
	assert.Equal(t, []Entry{{Artifact: "services/*", Field: "path", Reason: "r"}}, stale)
}

// Every allowlist entry has a reason and names an artifact testdata/wmco-11 holds, so none can hide from the
// stale check by naming something no test compares.
func TestAllowlistNamesKnownArtifacts(t *testing.T) {
	entries, err := Allowlist()
	require.NoError(t, err)
	artifacts, err := Artifacts()
	require.NoError(t, err)
	assert.Contains(t, artifacts, "services/aws")
	assert.Contains(t, artifacts, "userdata/azure")
	assert.Contains(t, artifacts, "kubelet.conf")
	for _, e := range entries {
		known := false
		for _, a := range artifacts {
			if ok, _ := path.Match(e.Artifact, a); ok {
				known = true
			}
		}
		assert.True(t, known, "allowlist entry %s %s names no artifact of testdata/wmco-11", e.Artifact, e.Field)
	}
}

func TestCompareJSONNamesLeaves(t *testing.T) {
	d, err := CompareJSON("kubelet.conf", []byte(`{"a":{"b":1,"c":[1,2]},"m":{}}`), []byte(`{"a":{"b":2,"c":[1,2]},"x":true}`))
	require.NoError(t, err)
	assert.Equal(t, []Difference{
		{Artifact: "kubelet.conf", Field: "a.b", WMCO: "1", Wmcon: "2"},
		{Artifact: "kubelet.conf", Field: "m", WMCO: "{}", Wmcon: ""},
		{Artifact: "kubelet.conf", Field: "x", WMCO: "", Wmcon: "true"},
	}, d)
}
