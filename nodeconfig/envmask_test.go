package nodeconfig

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlanShowsTheProxyMasked: configure --dry-run's plan, printed or as JSON, names the proxy variables it
// sets with the password of their URL masked.
func TestPlanShowsTheProxyMasked(t *testing.T) {
	p := Plan{Env: []EnvChange{{Name: "HTTP_PROXY", Value: "http://admin:hunter2@127.0.0.1:3128"}, {Name: "NO_PROXY"}}}
	var text strings.Builder
	require.NoError(t, p.Write(&text))
	assert.Contains(t, text.String(), "set HTTP_PROXY=http://REDACTED@127.0.0.1:3128")
	assert.Contains(t, text.String(), "remove NO_PROXY")
	b, err := json.Marshal(p)
	require.NoError(t, err)
	assert.Contains(t, string(b), `{"Name":"HTTP_PROXY","Value":"http://REDACTED@127.0.0.1:3128"}`)
	for _, out := range []string{text.String(), string(b)} {
		assert.NotContains(t, out, "hunter2")
	}
}
