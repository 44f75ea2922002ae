package model

import "strings"

// RedactURL hides the userinfo of a URL (http://user:password@proxy:3128, https://admin:pw@api:6443): the
// API server's address and the cluster's proxy are shown in headers, reports, errors and audit records, and
// a password must never reach them. It is the one masking of URLs everywhere wmcon shows one.
//
// It does not rely on parsing: a proxy value may have no scheme (user:pw@proxy:3128) and a password may hold
// an unescaped '@', '/' or ':', which make a parser either fail or read the password as a host or path.
// So everything between the scheme and the last '@' goes; a value without '@' is shown as it is.
func RedactURL(s string) string {
	prefix, rest := "", s
	if i := strings.Index(s, "://"); i >= 0 {
		prefix, rest = s[:i+3], s[i+3:]
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return s
	}
	return prefix + "REDACTED@" + rest[at+1:]
}
