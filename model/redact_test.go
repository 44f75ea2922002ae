package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRedactURLHidesEveryPassword: the userinfo goes whatever the value looks like, including the forms a
// URL parser gets wrong (no scheme, an unescaped '@' or '/' in the password); other values stay whole.
func TestRedactURLHidesEveryPassword(t *testing.T) {
	for in, want := range map[string]string{
		"http://admin:hunter2@proxy.example:3128":    "http://REDACTED@proxy.example:3128",
		"https://admin:hunter2-secret@127.0.0.1:1":   "https://REDACTED@127.0.0.1:1",
		"admin:hunter2@proxy.example:3128":           "REDACTED@proxy.example:3128",
		"http://admin:p@ss/w%rd@proxy.example:3128/": "http://REDACTED@proxy.example:3128/",
		"http://user@proxy.example:3128":             "http://REDACTED@proxy.example:3128",
		"http://proxy.example:3128":                  "http://proxy.example:3128",
		"https://127.0.0.1:6443":                     "https://127.0.0.1:6443",
		".cluster.local,.svc,127.0.0.0/8":            ".cluster.local,.svc,127.0.0.0/8",
		"":                                           "",
	} {
		got := RedactURL(in)
		assert.Equal(t, want, got, in)
		assert.NotContains(t, got, "hunter2")
		assert.NotContains(t, got, "p@ss")
	}
}
