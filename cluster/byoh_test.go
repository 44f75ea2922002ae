package cluster

import (
	"github.com/wmcon/wmcon/model"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseBYOH(t *testing.T) {
	instances, problems := ParseBYOH(map[string]string{
		"127.0.0.5":       "username=Administrator",
		"win.example.com": "username=admin",
		"127.0.0.6":       "username",
		"127.0.0.7":       "username=Administrator\n",
		"127.0.0.8":       "username=",
		"::1":             "username=Administrator",
		"127.0.0.9":       "user=Administrator",
	})
	assert.Equal(t, []model.BYOHInstance{{Address: "127.0.0.5", User: "Administrator"}, {Address: "win.example.com", User: "admin"}}, instances)
	assert.Len(t, problems, 5)
	joined := ""
	for _, p := range problems {
		joined += p + "\n"
	}
	for _, want := range []string{`"127.0.0.6": the value must be username=<name>`, `"127.0.0.7": the value has leading or trailing white space`,
		`"127.0.0.8": the user name is empty`, `"::1": IPv6 addresses are not supported`, `"127.0.0.9": the value must be username=<name>`} {
		assert.Contains(t, joined, want)
	}
}
