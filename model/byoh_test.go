package model

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestBYOHAddressChecks: what README says byoh add rejects, each with its reason; a host's IPv4 address
// and DNS names pass.
func TestBYOHAddressChecks(t *testing.T) {
	for addr, want := range map[string]string{
		"":                                       "empty",
		" 127.0.0.5":                             "white space around it",
		"127.0.0 .5":                             "white space or control characters",
		"win\x1b[2J.example.com":                 "white space or control characters",
		"127.0.0.0":                              "network or broadcast address of 127.0.0.0/8",
		"127.255.255.255":                        "network or broadcast address of 127.0.0.0/8",
		"255.255.255.255":                        "the broadcast address",
		"0.0.0.0":                                `"this network"`,
		"224.0.0.1":                              "multicast",
		"240.0.0.1":                              "reserved",
		"169.254.169.254":                        "link-local",
		"127.0.0.256":                            "not a valid IPv4 address",
		"127.0.0.05":                             "not a valid IPv4 address",
		"::ffff:127.0.0.75":                      "IPv4 written as IPv6 (IPv4-mapped): write it as 127.0.0.75",
		"fe80::1%eth0":                           "IPv6 addresses are not supported",
		"::1":                                    "IPv6 addresses are not supported",
		"127.0.0.5:22":                           "has a port",
		"win;rm.example.com":                     `contains ';'`,
		"win_1.example.com":                      `contains '_'`,
		"-win.example.com":                       "starts or ends with '-'",
		"win..example.com":                       "empty label",
		strings.Repeat("a", 64) + ".example.com": "label of 64 characters",
	} {
		err := CheckBYOHAddress(addr)
		if assert.Error(t, err, "%q", addr) {
			assert.Contains(t, err.Error(), want, "%q", addr)
		}
	}
	for _, addr := range []string{"127.0.0.5", "127.0.0.75", "win-1.example.com", "WIN1", "a.b-c.d"} {
		assert.NoError(t, CheckBYOHAddress(addr), addr)
	}
}

// TestBYOHUserChecks: a plain Windows account name passes; white space, control characters (a terminal
// escape), quotes, ';', a name over Windows' 20 characters and a leading '-' do not.
func TestBYOHUserChecks(t *testing.T) {
	for user, want := range map[string]string{
		"":                       "empty",
		"John Smith":             "white space",
		"ad\tmin":                "white space",
		"admin\n":                "white space",
		"ad\x1b[31mmin":          `control character '\x1b'`,
		`"admin"`:                `contains '"'`,
		"o'brien":                `contains '\''`,
		"admin;id":               `contains ';'`,
		"$(id)":                  `contains '$'`,
		"corp\\admin":            `contains '\\'`,
		strings.Repeat("a", 300): "300 characters long: Windows account names have at most 20",
		"-oProxyCommand":         "starts with '-'",
	} {
		err := CheckBYOHUser(user)
		if assert.Error(t, err, "%q", user) {
			assert.Contains(t, err.Error(), want, "%q", user)
		}
	}
	for _, user := range []string{"Administrator", "capi", "svc.wmco_1", "Jürgen", strings.Repeat("a", MaxBYOHUser)} {
		assert.NoError(t, CheckBYOHUser(user), user)
	}
}
