package model

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The checks of a windows-instances entry, one set for every place that takes one: wmcon byoh add and
// validate, wmcon setup --byoh, the console's form and the reader of the ConfigMap. Each error is a sentence
// about the address or the user and what to write instead; the caller names the entry.

// MaxBYOHUser is the longest user name: Windows limits account (logon) names to 20 characters.
const MaxBYOHUser = 20

// CheckBYOHAddress says what is wrong with an address for windows-instances, nil when nothing is: WMCO
// takes an IPv4 address or a DNS name resolving to one, and the address is a ConfigMap key (letters,
// digits, '-', '.' and '_' only), so IPv6, zones and ports cannot even be stored.
func CheckBYOHAddress(addr string) error {
	switch {
	case addr == "":
		return errors.New("the address is empty: give the host's IPv4 address or DNS name")
	case strings.TrimSpace(addr) != addr:
		return errors.New("the address has white space around it: remove it")
	case strings.IndexFunc(addr, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return errors.New("the address contains white space or control characters: give only the host's IPv4 address or DNS name")
	case strings.Contains(addr, ":"):
		return colonAddress(addr)
	case strings.Trim(addr, "0123456789.") == "":
		ip := net.ParseIP(addr)
		if ip == nil || ip.To4() == nil {
			return errors.New("the address is not a valid IPv4 address (four numbers 0-255, no leading zeros)")
		}
		return CheckHostIPv4(ip)
	}
	return checkDNSName(addr)
}

// colonAddress explains an address with a ':' (an IPv6 address, with a zone or not, or a port).
func colonAddress(addr string) error {
	host, _, zoned := strings.Cut(addr, "%")
	ip := net.ParseIP(host)
	switch {
	case ip != nil && ip.To4() != nil && !zoned:
		return fmt.Errorf("the address is IPv4 written as IPv6 (IPv4-mapped): write it as %s", ip.To4())
	case ip != nil:
		return errors.New("IPv6 addresses are not supported by WMCO: use the host's IPv4 address or a DNS name resolving to it")
	}
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return errors.New("the address has a port: give the address alone (WMCO connects to port 22)")
	}
	return errors.New("the address is neither an IPv4 address nor a DNS name (':' cannot be in either)")
}

// checkDNSName checks a host name as DNS allows it: labels of letters, digits and '-' (not at either end)
// of at most 63 characters, separated by dots, 253 characters in all.
func checkDNSName(name string) error {
	if len(name) > 253 {
		return fmt.Errorf("the DNS name is %d characters long: at most 253", len(name))
	}
	for _, label := range strings.Split(name, ".") {
		switch {
		case label == "":
			return errors.New("the DNS name has an empty label (two dots in a row, or a dot at either end): write the name without it")
		case len(label) > 63:
			return fmt.Errorf("the DNS name has a label of %d characters: at most 63", len(label))
		case strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-"):
			return fmt.Errorf("the DNS name's label %q starts or ends with '-', which DNS does not allow", label)
		}
		if i := strings.IndexFunc(label, func(r rune) bool { return !isASCIIAlnum(r) && r != '-' }); i >= 0 {
			r, _ := utf8.DecodeRuneInString(label[i:])
			return fmt.Errorf("the address contains %q: a DNS name has only letters, digits, '-' and dots, an IPv4 address only digits and dots", r)
		}
	}
	return nil
}

func isASCIIAlnum(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}

// CheckHostIPv4 says why an IPv4 address cannot be a host's (nil when it can): addresses that name a
// network, every host at once, or no host at all.
func CheckHostIPv4(ip net.IP) error {
	v4 := ip.To4()
	switch {
	case v4 == nil:
		return errors.New("IPv6 addresses are not supported by WMCO: use the host's IPv4 address or a DNS name resolving to it")
	case v4[0] == 0:
		return fmt.Errorf("%s is in 0.0.0.0/8 (\"this network\"), not a host's address: give the address the cluster reaches the host at", v4)
	case v4.Equal(net.IPv4bcast):
		return fmt.Errorf("%s is the broadcast address, not a host's: give the address the cluster reaches the host at", v4)
	case v4[0] == 127 && (v4.Equal(net.IPv4(127, 0, 0, 0)) || v4.Equal(net.IPv4(127, 255, 255, 255))):
		return fmt.Errorf("%s is the network or broadcast address of 127.0.0.0/8, not a host's: give the address the cluster reaches the host at", v4)
	case v4.IsMulticast():
		return fmt.Errorf("%s is a multicast address (224.0.0.0/4), not a host's: give the address the cluster reaches the host at", v4)
	case v4[0] >= 240:
		return fmt.Errorf("%s is in the reserved 240.0.0.0/4, not a host's: give the address the cluster reaches the host at", v4)
	case v4.IsLinkLocalUnicast():
		return fmt.Errorf("%s is link-local (169.254.0.0/16): the cluster cannot route to it; give the host's configured address", v4)
	}
	return nil
}

// CheckBYOHUser says what is wrong with the Windows user WMCO logs in as (nil when nothing is). The name is
// a Windows account name: at most 20 characters, letters, digits, '.', '_' and '-' (Windows also allows a
// few punctuation marks, but none that wmcon or WMCO need, and a quote, ';' or '$' in a user name only
// serves to break the commands it is pasted into); white space and control characters never.
func CheckBYOHUser(user string) error {
	if user == "" {
		return errors.New("the user name is empty")
	}
	for _, r := range user {
		switch {
		case unicode.IsSpace(r):
			return errors.New("the user name contains white space (a space, tab or newline): give the account name alone")
		case unicode.IsControl(r) || !unicode.IsPrint(r):
			return fmt.Errorf("the user name contains the control character %q: give the account name alone", r)
		case !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("._-", r):
			return fmt.Errorf("the user name contains %q: a Windows account name here has only letters, digits, '.', '_' and '-'", r)
		}
	}
	if n := utf8.RuneCountInString(user); n > MaxBYOHUser {
		return fmt.Errorf("the user name is %d characters long: Windows account names have at most %d", n, MaxBYOHUser)
	}
	if strings.HasPrefix(user, "-") {
		return errors.New("the user name starts with '-', which commands would take for an option")
	}
	return nil
}

// byohProblemPrefix starts the sentence of a windows-instances entry WMCO cannot use (BYOHProblem).
const byohProblemPrefix = "windows-instances entry "

// BYOHProblem is the sentence naming a windows-instances entry WMCO cannot use and why (Snapshot.BYOHProblems).
func BYOHProblem(addr string, err error) string {
	return fmt.Sprintf("%s%q: %v", byohProblemPrefix, addr, err)
}

// ParseBYOHProblem splits a BYOHProblem sentence back into the entry's address and its problem.
func ParseBYOHProblem(p string) (addr, problem string, ok bool) {
	rest, found := strings.CutPrefix(p, byohProblemPrefix)
	if !found {
		return "", "", false
	}
	quoted, problem, found := strings.Cut(rest, ": ")
	if !found {
		return "", "", false
	}
	addr, err := strconv.Unquote(quoted)
	if err != nil {
		return "", "", false
	}
	return addr, problem, true
}

// BYOHStallInfo is why WMCO configures none of the BYOH hosts: the first wrong entry, its problem and the
// command that removes it.
type BYOHStallInfo struct {
	Entry, Problem string
	More           int // other wrong entries
	Hosts          int // entries in all
	Fix            string
}

// BYOHStall says whether WMCO's BYOH hosts are stalled: with WMCO installed, one wrong windows-instances
// entry and it configures none of the entries' hosts (its controller reads every entry first and stops at a
// bad one). ok is false when nothing stalls; standalone (no operator) wmcon configures each host itself.
func (s *Snapshot) BYOHStall() (BYOHStallInfo, bool) {
	if s == nil || s.Cluster.WMCOVersion == "" || len(s.BYOHProblems) == 0 {
		return BYOHStallInfo{}, false
	}
	st := BYOHStallInfo{Problem: s.BYOHProblems[0], More: len(s.BYOHProblems) - 1, Hosts: len(s.BYOH) + len(s.BYOHProblems)}
	if addr, problem, ok := ParseBYOHProblem(s.BYOHProblems[0]); ok {
		st.Entry, st.Problem = addr, problem
		st.Fix = "wmcon byoh remove " + addr
	}
	return st, true
}
