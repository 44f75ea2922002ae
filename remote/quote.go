package remote

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// singleQuoteDoubler doubles every character PowerShell accepts as a single quote: ' and the typographic
// ‘ ’ ‚ ‛. PowerShell ends a single-quoted literal at any of the five unless another of them follows,
// so doubling all five (and nothing else) keeps the literal closed whatever the value holds.
var singleQuoteDoubler = strings.NewReplacer(
	"'", "''",
	"\u2018", "\u2018\u2018",
	"\u2019", "\u2019\u2019",
	"\u201a", "\u201a\u201a",
	"\u201b", "\u201b\u201b",
)

// Quote makes a PowerShell single-quoted literal of s. It is the one function that puts a value into a
// command (see COMMANDS.md): inside single quotes PowerShell expands nothing ($, `, " are plain text).
func Quote(s string) string {
	return "'" + singleQuoteDoubler.Replace(s) + "'"
}

var serviceNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,256}$`)

// ValidateServiceName refuses a Windows service name wmcon would not create, before it reaches sc.exe.
func ValidateServiceName(name string) error {
	if !serviceNamePattern.MatchString(name) {
		return fmt.Errorf("invalid Windows service name %q: use 1 to 256 letters, digits, '_', '.' or '-'", name)
	}
	return nil
}

// ValidateIPv4 refuses anything but a dotted-quad IPv4 address, before it reaches route.exe.
func ValidateIPv4(s string) error {
	addr, err := netip.ParseAddr(s)
	if err != nil || !addr.Is4() {
		return fmt.Errorf("invalid IPv4 address %q", s)
	}
	return nil
}

// checkNativeArg refuses a double quote in a value passed to a native program: Windows PowerShell 5.1
// re-quotes native arguments and would split the value at it.
func checkNativeArg(what, value string) error {
	if strings.ContainsRune(value, '"') {
		return fmt.Errorf("%s %q contains a double quote, which Windows PowerShell cannot pass to a native program intact", what, value)
	}
	return nil
}
