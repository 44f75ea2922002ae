package remote

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/sim/windows"
)

// TestEnvValuesWithControlCharactersAreNotWritten: a CR/LF (or any control character) in a machine variable
// would be stored as it is; SetEnv and SetEnvs refuse it before anything reaches the host, without
// repeating the value, and the variable keeps what it had.
func TestEnvValuesWithControlCharactersAreNotWritten(t *testing.T) {
	h, c := simClient(t, windows.Options{}, nil)
	ctx := testCtx(t)
	require.NoError(t, c.SetEnv(ctx, "HTTP_PROXY", "http://127.0.0.1:3128"))
	before := len(h.Commands())
	for _, set := range []func(string) error{
		func(v string) error { return c.SetEnv(ctx, "HTTP_PROXY", v) },
		func(v string) error {
			return c.SetEnvs(ctx, map[string]string{"HTTP_PROXY": v, "NO_PROXY": ".cluster.local"})
		},
	} {
		for _, v := range []string{"http://a:secret@127.0.0.1:3128\r\nEVIL=1", "x\ny", "x\x1b[2Jy"} {
			err := set(v)
			require.Error(t, err, "%q", v)
			assert.Contains(t, err.Error(), "HTTP_PROXY: the value has a control character")
			assert.NotContains(t, err.Error(), "secret")
		}
	}
	assert.Len(t, h.Commands(), before, "nothing was sent to the host")
	got, _ := h.Env("HTTP_PROXY")
	assert.Equal(t, "http://127.0.0.1:3128", got)
	_, ok := h.Env("NO_PROXY")
	assert.False(t, ok)
}
