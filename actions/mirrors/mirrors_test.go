package mirrors_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/mirrors"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

func TestMirrorsApplyStatusAndADroppedNode(t *testing.T) {
	e := actiontest.NewEnv(t)
	tree := actiontest.MirrorCluster(t, e)
	hs := actiontest.NewLogHosts(t)
	var names []string
	for i := range 4 {
		name := fmt.Sprintf("mirror-%d", i)
		sim := hs.Add(name, fmt.Sprintf("127.0.%d.%d", 90, 10+i))
		require.NoError(t, sim.WriteFile(config.RegistriesDir+`\stale.io\hosts.toml`, []byte("old")))
		names = append(names, name)
	}
	nodes := hs.Infos(names...)

	before := mirrors.MirrorsStatus(e.Ctx, hs.Resolver, nodes, tree, 0)
	for _, st := range before {
		assert.Equal(t, mirrors.MirrorsOutOfStep, st.State, st.Node)
		assert.Equal(t, []string{`stale.io\hosts.toml`}, st.Extra)
	}

	// mirror-2's host drops its connections in the middle of ReplaceDir, as the new tree starts being staged
	// beside the directory: the drop happens from the write's own progress report, on the connection the
	// write uses. (A drop later, between staging and the swap, is survived when the swap reconnects.)
	dropAt := map[string]string{"mirror-2": "writing "}
	var dropped sync.Map
	rec := &actiontest.Recorder{OnEvent: func(ev event.Event) {
		prefix, ok := dropAt[ev.Target]
		// ReplaceDir's own progress ("writing N files to …registries.new-…"), not the step's start.
		if ok && ev.Step == mirrors.StepWrite && strings.HasPrefix(ev.Message, prefix) && strings.Contains(ev.Message, ".new-") {
			if _, done := dropped.LoadOrStore(ev.Target, true); !done {
				hs.Sims[ev.Target].DropConnections()
			}
		}
	}}
	err := mirrors.MirrorsApply(e.Ctx, hs.Resolver, nodes, tree, mirrors.MirrorsApplyOptions{Concurrency: 4}, rec)
	require.Error(t, err)
	for n := range dropAt {
		_, ok := dropped.Load(n)
		require.True(t, ok, "%s was not dropped during its write:\n%s", n, rec.Dump())
		assert.Contains(t, err.Error(), n)
	}
	for _, n := range names {
		final := rec.Final(t, n)
		if _, ok := dropAt[n]; ok {
			assert.Equal(t, event.Failed, final.Outcome, rec.Dump())
			assert.Contains(t, final.Message, "never a mix")
			assert.Contains(t, final.Hint, "wmcon mirrors apply "+n)
			// What the host holds is what the state says: the old tree, whole (the swap never ran).
			old, err := hs.Sims[n].ReadFile(config.RegistriesDir + `\stale.io\hosts.toml`)
			require.NoError(t, err, n)
			assert.Equal(t, "old", string(old), n)
			assert.False(t, hs.Sims[n].Exists(config.RegistriesDir+`\registry.local_5000_\hosts.toml`), n)
			continue
		}
		assert.NotContains(t, err.Error(), n, "a healthy node is not reported failed")
		assert.Equal(t, event.Succeeded, final.Outcome, rec.Dump())
		assert.Contains(t, final.Message, "no restart needed")
	}
	for _, st := range mirrors.MirrorsStatus(e.Ctx, hs.Resolver, nodes, tree, 0) {
		if _, ok := dropAt[st.Node]; ok {
			assert.Equal(t, mirrors.MirrorsOutOfStep, st.State, st.Summary())
			assert.Equal(t, []string{`stale.io\hosts.toml`}, st.Extra, st.Node)
			continue
		}
		assert.Equal(t, mirrors.MirrorsInStep, st.State, st.Summary())
	}

	// Applying again converges, the dropped node included, and nothing is left beside the directory.
	rec = &actiontest.Recorder{}
	require.NoError(t, mirrors.MirrorsApply(e.Ctx, hs.Resolver, nodes, tree, mirrors.MirrorsApplyOptions{}, rec))
	for _, st := range mirrors.MirrorsStatus(e.Ctx, hs.Resolver, nodes, tree, 0) {
		assert.Equal(t, mirrors.MirrorsInStep, st.State, st.Summary())
	}
	for n := range dropAt {
		got, err := hs.Sims[n].ReadFile(config.RegistriesDir + `\registry.local_5000_\hosts.toml`)
		require.NoError(t, err)
		assert.Equal(t, string(tree.Map()[`registry.local_5000_\hosts.toml`]), string(got))
		// The staged copy the drop left beside the directory is gone too.
		h, err := hs.Resolver.Host(e.Ctx, hs.Nodes[n])
		require.NoError(t, err)
		beside, _, err := h.ReadTree(e.Ctx, `C:\k\containerd`)
		require.NoError(t, err)
		for p := range beside {
			assert.True(t, strings.HasPrefix(p, `registries\`), "%s left %s beside the directory", n, p)
		}
	}
}

func TestMirrorsApplyCopesWithAHeldDirectory(t *testing.T) {
	e := actiontest.NewEnv(t)
	tree := actiontest.MirrorCluster(t, e)
	hs := actiontest.NewLogHosts(t)
	sim := hs.Add("held", "127.0.91.10")
	hs.Add("free", "127.0.91.11")
	require.NoError(t, sim.WriteFile(config.RegistriesDir+`\stale.io\hosts.toml`, []byte("old")))
	release, err := sim.HoldOpen(config.RegistriesDir + `\stale.io\hosts.toml`)
	require.NoError(t, err)
	defer release()

	rec := &actiontest.Recorder{}
	opts := mirrors.MirrorsApplyOptions{}
	opts.Replace.Tries, opts.Replace.RetryDelay = 2, 20*time.Millisecond
	err = mirrors.MirrorsApply(e.Ctx, hs.Resolver, hs.Infos("held", "free"), tree, opts, rec)
	require.Error(t, err)
	final := rec.Final(t, "held")
	assert.Equal(t, event.Failed, final.Outcome)
	assert.Contains(t, final.Message, "still in place")
	assert.Equal(t, event.Succeeded, rec.Final(t, "free").Outcome)
	old, err := sim.ReadFile(config.RegistriesDir + `\stale.io\hosts.toml`)
	require.NoError(t, err)
	assert.Equal(t, "old", string(old), "the held directory is untouched")

	// Once the reader lets go (containerd's reads are short), the swap goes through while retrying.
	time.AfterFunc(100*time.Millisecond, release)
	opts.Replace.Tries, opts.Replace.RetryDelay = 6, 50*time.Millisecond
	require.NoError(t, mirrors.MirrorsApply(e.Ctx, hs.Resolver, hs.Infos("held"), tree, opts, &actiontest.Recorder{}))
	assert.False(t, sim.Exists(config.RegistriesDir+`\stale.io`))
}
