package binding_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/wmcon/wmcon/ui/binding"
)

func TestEnabledKeepsOrderAndDropsDisabled(t *testing.T) {
	a, b, c := binding.New("a", "first", "a"), binding.New("b", "second", "b"), binding.New("c", "third", "c", "C")
	b.SetEnabled(false)
	got := binding.Enabled(a, b, c)
	var names []string
	for _, k := range got {
		names = append(names, k.Help().Key+" "+k.Help().Desc)
	}
	assert.Equal(t, []string{"a first", "c third"}, names)
	assert.Equal(t, []string{"c", "C"}, got[1].Keys())
	assert.Empty(t, binding.Enabled())
}

func TestWithKeysAddsTheKeyBeforeACommandItDoes(t *testing.T) {
	keys := []binding.CommandKey{
		{Command: "wmcon uncordon win-a", Key: "u"},
		{Command: "wmcon reboot win-a", Key: "R"},
		{Command: "wmcon reboot win-a --on-pdb disable-eviction --yes-disable-eviction", Key: "R (tick disable eviction)"},
	}
	for _, tc := range []struct{ in, want string }{
		{"node left cordoned: run wmcon uncordon win-a", "node left cordoned: press u or run wmcon uncordon win-a"},
		{"node left cordoned: run wmcon uncordon win-a once the host is back",
			"node left cordoned: press u or run wmcon uncordon win-a once the host is back"},
		{"run wmcon uncordon win-a; or run wmcon reboot win-a.", "press u or run wmcon uncordon win-a; or press R or run wmcon reboot win-a."},
		{"reboot it (run wmcon reboot win-a: it adds the route back)", "reboot it (press R or run wmcon reboot win-a: it adds the route back)"},
		// Another node, a longer name, or flags the key does not give: no key.
		{"run wmcon uncordon win-b", "run wmcon uncordon win-b"},
		{"run wmcon uncordon win-ab", "run wmcon uncordon win-ab"},
		{"run wmcon uncordon win-a.example.com", "run wmcon uncordon win-a.example.com"},
		{"run wmcon uncordon win-a --dry-run", "run wmcon uncordon win-a --dry-run"},
		{"relax the budget or run wmcon reboot win-a --on-pdb disable-eviction --yes-disable-eviction",
			"relax the budget or press R (tick disable eviction) or run wmcon reboot win-a --on-pdb disable-eviction --yes-disable-eviction"},
		// A command named without "run" is prose, not an instruction.
		{"see wmcon uncordon win-a", "see wmcon uncordon win-a"},
	} {
		assert.Equal(t, tc.want, binding.WithKeys(tc.in, keys...), tc.in)
	}
	assert.Equal(t, "run wmcon uncordon win-a", binding.WithKeys("run wmcon uncordon win-a"), "no keys (read-only): the command only")
}
