package windows

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -ErrorAction Stop makes a cmdlet's error terminating: the rest of the command line does not run.
func TestErrorActionStopEndsTheLine(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	r := run(t, c, `Move-Item -LiteralPath 'C:\nope' -Destination 'C:\x' -ErrorAction Stop; New-Item -ItemType Directory -Force -Path 'C:\ran' | Out-Null`)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "Move-Item")
	assert.False(t, th.Exists(`C:\ran`), "the statement after a terminating error must not run")

	r = run(t, c, `Move-Item -LiteralPath 'C:\nope' -Destination 'C:\x'; New-Item -ItemType Directory -Force -Path 'C:\ran' | Out-Null`)
	assert.Equal(t, 0, r.code, "a non-terminating error does not stop the line; the last statement decides")
	assert.True(t, th.Exists(`C:\ran`))
}

// A directory with a file another process holds open cannot be moved or deleted, as on Windows.
func TestHeldDirectoryCannotBeMovedOrRemoved(t *testing.T) {
	th := startHost(t, Options{})
	c := th.dial(t)
	require.NoError(t, th.WriteFile(`C:\k\containerd\registries\quay.io\hosts.toml`, []byte("server = \"x\"\r\n")))
	release, err := th.HoldOpen(`C:\k\containerd\registries\quay.io\hosts.toml`)
	require.NoError(t, err)

	r := run(t, c, `Move-Item -LiteralPath 'C:\k\containerd\registries' -Destination 'C:\k\containerd\old' -ErrorAction Stop`)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `Access to the path 'C:\k\containerd\registries' is denied.`)
	r = run(t, c, `Remove-Item -LiteralPath 'C:\k\containerd\registries' -Force -Recurse`)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "being used by another process")
	assert.True(t, th.Exists(`C:\k\containerd\registries\quay.io\hosts.toml`))

	release()
	release() // releasing twice is harmless
	r = run(t, c, `Move-Item -LiteralPath 'C:\k\containerd\registries' -Destination 'C:\k\containerd\old' -ErrorAction Stop`)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.True(t, th.Exists(`C:\k\containerd\old\quay.io\hosts.toml`))

	_, err = th.HoldOpen(`C:\k\missing`)
	assert.Error(t, err)
}
