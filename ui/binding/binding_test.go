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
