package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The project's network rule: every address a test, benchmark, demo, fixture, generator or script gives a
// node, host or endpoint is in 127.0.0.0/8 (or ::1), so nothing a test starts can send a packet off this
// machine — not even to a private range — and no such address appears even as text. TestOnlyLoopbackAddresses
// holds every text file of the repository to it. What is not an address of anything (a netmask, the
// unspecified address of a bind or a default route) passes by rule; the few other literals that must stay
// are listed in loopbackExceptions, each with why, and match exactly.
//
// Generators count: an address a format string builds (fmt.Sprintf with %d octets) is checked with each
// verb read as 0.

// loopbackException lets one literal through, in the files named (path prefixes; none = anywhere).
type loopbackException struct {
	literal string
	files   []string
	why     string
}

var loopbackExceptions = []loopbackException{
	{literal: "169.254.169.254", why: "the EC2 instance metadata address: WMCO's contract route (route add 169.254.169.254 mask " +
		"255.255.255.255 GATEWAY) that wmcon sends to an AWS Windows host as a command, and tests read back as text; nothing dials it"},
	{literal: "169.254.169.254/32", why: "the same route, as Get-NetRoute -DestinationPrefix names it"},
	{literal: "198.18.0.%d", files: []string{"testsupport/kubeapi/nodeproxy.go"}, why: "kube-apiserver's node proxy refuses " +
		"every node address that is not global unicast (k8s.io/kubernetes pkg/registry/core/node/strategy.go, isProxyableHostname: " +
		"all of 127.0.0.0/8 and ::1, and any name resolving to them), so a Node a test reaches through /api/v1/nodes/NAME/proxy " +
		"must carry another address. testserver.FakeNodeIP makes it 198.18.0.N (RFC 2544's benchmarking range, never routed), " +
		"and the test API server's egress selector hands each such connection to an HTTP CONNECT proxy on a unix socket in the " +
		"test, which dials the loopback address registered for it (NodeProxy.Route refuses any other): the fake address is never dialled"},
	{literal: "0.0.1.0", why: "not an address: the version in the Windows capability name OpenSSH.Server~~~~0.0.1.0 (WMCO's user data)"},
	{literal: "10.128.0.0/14", why: "OpenShift's default cluster network: a configuration value of the simulated clusters (network.config " +
		"clusterNetwork) that the doctor reads; no address is handed out from it"},
	{literal: "172.30.0.0/16", why: "OpenShift's default service network: a configuration value, from which wmcon derives the kubelet's " +
		"clusterDNS as WMCO does"},
	{literal: "172.30.0.10", why: "the clusterDNS WMCO derives from that service network (its 10th address) and writes into kubelet.conf; " +
		"the tests compare wmcon's kubelet.conf with WMCO's, and the simulated kubelet never dials it"},
	{literal: "10.132.0.0/14", why: "the hybrid overlay network WMCO's documentation uses: a configuration value (network.operator " +
		"hybridClusterNetwork, kube-proxy's --cluster-cidr) that the doctor and the node configuration read"},
	{literal: "2001:db8::/112", files: []string{"nodeconfig/nodeconfig_test.go"}, why: "RFC 3849's documentation prefix as an IPv6 " +
		"service network, to test that the clusterDNS (its 10th address) is computed for IPv6 too; only compared, given to nothing"},
	{literal: "2001:db8::a", files: []string{"nodeconfig/nodeconfig_test.go"}, why: "that computed clusterDNS"},
	{literal: "240.0.0.0/4", why: "class E: the range the doctor and triage reject in cluster networks (Windows cannot route it); a rule, not an address"},
	{literal: "224.0.0.0/4", files: []string{"model/byoh.go"}, why: "multicast, named in the message of the BYOH address check that refuses it; a rule, not an address"},
	{literal: "169.254.0.0/16", files: []string{"model/byoh.go"}, why: "link-local, named in the message of the BYOH address check that refuses it"},
	{literal: "224.0.0.1", files: []string{"model/byoh_test.go"}, why: "an input the BYOH address check must refuse (multicast); refused before anything uses it"},
	{literal: "240.0.0.1", files: []string{"model/byoh_test.go"}, why: "an input the BYOH address check must refuse (class E); refused before anything uses it"},
	{literal: "fe80::1%eth0", files: []string{"model/byoh_test.go", "cluster/byohcheck_test.go", "cli/byohadd_test.go", "ui/machinesets_test.go"},
		why: "a zoned link-local IPv6 input the BYOH address check must refuse with its own message (issue 22 item 9); refused before anything uses it"},
}

// addressTemplate finds IPv4 addresses a format string builds: some octets are a %d verb.
var addressTemplate = regexp.MustCompile(`(?:\d{1,3}|%d)(?:\.(?:\d{1,3}|%d)){3}(?:/\d{1,2})?`)

// awsHostName finds the address an AWS-style host name spells (ip-A-B-C-D.ec2.internal names A.B.C.D):
// the names a fixture gives nodes follow their addresses, so they keep to loopback too.
var awsHostName = regexp.MustCompile(`ip-((?:\d{1,3}|%d)(?:-(?:\d{1,3}|%d)){3})`)

// addressCandidate finds IPv4 and IPv6 literals, with an optional prefix length; neighbours are checked
// in code (Go's regexp has no look-around).
var addressCandidate = regexp.MustCompile(`(?i)\d{1,3}(?:\.\d{1,3}){3}(?:/\d{1,3})?|[0-9a-f]*::?[0-9a-f:.]*(?:%[0-9a-z]+)?(?:/\d{1,3})?`)

// scannedFile says which files the rule covers: code, scripts, configuration, fixtures and documents.
func scannedFile(path string) bool {
	if strings.Contains("/"+path, "/testdata/") {
		return true
	}
	switch filepath.Ext(path) {
	case ".go", ".sh", ".bash", ".yaml", ".yml", ".json", ".golden", ".txt", ".md", ".toml", ".conf", ".ps1", ".psm1", ".tmpl", ".mod":
		return true
	}
	return filepath.Base(path) == "Makefile" || filepath.Base(path) == "Dockerfile"
}

// nonLoopback lists the addresses in line that break the rule, as they are written.
func nonLoopback(line string) []string {
	var bad []string
	for _, loc := range addressCandidate.FindAllStringIndex(line, -1) {
		lit := line[loc[0]:loc[1]]
		if !standalone(line, loc[0], loc[1]) {
			continue
		}
		addr, ok := parseLiteral(lit)
		if !ok || allowedByRule(addr) {
			continue
		}
		bad = append(bad, lit)
	}
	for _, loc := range addressTemplate.FindAllStringIndex(line, -1) {
		lit := line[loc[0]:loc[1]]
		if !strings.Contains(lit, "%d") || !standalone(line, loc[0], loc[1]) {
			continue
		}
		if addr, ok := parseLiteral(strings.ReplaceAll(lit, "%d", "0")); ok && !allowedByRule(addr) {
			bad = append(bad, lit)
		}
	}
	for _, m := range awsHostName.FindAllStringSubmatchIndex(line, -1) {
		if m[0] > 0 && strings.ContainsRune("_-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", rune(line[m[0]-1])) {
			continue
		}
		dotted := strings.ReplaceAll(strings.ReplaceAll(line[m[2]:m[3]], "-", "."), "%d", "0")
		if addr, ok := parseLiteral(dotted); ok && !allowedByRule(addr) {
			bad = append(bad, line[m[0]:m[1]])
		}
	}
	return bad
}

// standalone rejects a match that is part of something longer: a version (1.2.3.4.5, v1.2.3.4), an
// identifier or a PowerShell member ([System.Text.Encoding]::ASCII). An IPv4 address may be followed by
// ":port"; an IPv6 candidate touching a colon is only part of one.
func standalone(line string, start, end int) bool {
	word := func(c byte) bool {
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	v6 := strings.Contains(line[start:end], ":")
	if start > 0 && (word(line[start-1]) || line[start-1] == '.' || v6 && line[start-1] == ':') {
		return false
	}
	if end < len(line) && (word(line[end]) || v6 && line[end] == ':' ||
		line[end] == '.' && end+1 < len(line) && line[end+1] >= '0' && line[end+1] <= '9') {
		return false
	}
	return true
}

// parseLiteral reads an address or a prefix (zone and prefix length dropped). An IPv6 candidate needs
// "::" or all eight groups, so a time or a MAC address is not one.
func parseLiteral(lit string) (netip.Addr, bool) {
	host := lit
	if i := strings.IndexByte(host, '/'); i >= 0 {
		host = host[:i]
	}
	if i := strings.IndexByte(host, '%'); i >= 0 {
		host = host[:i]
	}
	if strings.Contains(host, ":") && !strings.Contains(host, "::") && strings.Count(host, ":") != 7 {
		return netip.Addr{}, false
	}
	addr, err := netip.ParseAddr(host)
	return addr, err == nil
}

// allowedByRule: loopback, and what names no host — the unspecified address (a bind, a default route) and
// a netmask.
func allowedByRule(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLoopback() || a.IsUnspecified() || isNetmask(a)
}

// isNetmask: an IPv4 address of leading one bits (255.255.255.0), other than 0.0.0.0 (unspecified, above).
func isNetmask(a netip.Addr) bool {
	if !a.Is4() {
		return false
	}
	b := a.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	return v != 0 && v|(v-1) == ^uint32(0) && b[0] == 255
}

// covers: the literal, in one of the files named, or in this file, whose list names it.
func (e loopbackException) covers(path, lit string) bool {
	return lit == e.literal && (len(e.files) == 0 || path == "loopback_test.go" ||
		slices.ContainsFunc(e.files, func(f string) bool { return strings.HasPrefix(path, f) }))
}

// repoFiles lists the tracked and the new (not ignored) files: git's view, so a build output or a local
// scratch file does not count, and a file not yet added does.
func repoFiles(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("the loopback scan lists the repository's files with git ls-files: %v", err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" && scannedFile(f) {
			files = append(files, f)
		}
	}
	return files
}

// scanFile reports file:line: literal for each address outside the rule and its exceptions.
func scanFile(path string, data []byte) []string {
	if bytes.IndexByte(data, 0) >= 0 {
		return nil // binary
	}
	var found []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		for _, lit := range nonLoopback(sc.Text()) {
			if !slices.ContainsFunc(loopbackExceptions, func(e loopbackException) bool { return e.covers(path, lit) }) {
				found = append(found, fmt.Sprintf("%s:%d: %s", path, n, lit))
			}
		}
	}
	return found
}

func TestOnlyLoopbackAddresses(t *testing.T) {
	files := repoFiles(t)
	if len(files) < 100 {
		t.Fatalf("found only %d files to scan: is the test running at the module root?", len(files))
	}
	var found []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet in the index
		}
		if err != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		found = append(found, scanFile(f, data)...)
	}
	for _, f := range found {
		t.Errorf("%s is not a loopback address (127.0.0.0/8 or ::1): use one, or if it is no address of a node, host or endpoint, add it to loopbackExceptions with why", f)
	}
}

// The scanner itself: it catches what it must, and lets through what the rule allows. (The planted file is
// written with · for ., ¦ for : and ¬ for -, so that this file holds no address itself.)
func TestLoopbackScannerCatchesAPlantedAddress(t *testing.T) {
	unhide := strings.NewReplacer("·", ".", "¦", ":", "¬", "-")
	planted := unhide.Replace("package x\n\n" +
		"var node = \"10·0·0·5¦22\"\n" + // 3
		"var ok = \"127·0·0·5¦22\"\n" +
		"var v6 = \"[fd00¦¦5]¦22\"\n" + // 5
		"var mask = \"255·255·255·0\"\n" +
		"var any = \"0·0·0·0¦0\"\n" +
		"var cidr = \"192·168·0·0/16\"\n" + // 8
		"var build = \"10·0·20348·3932\"\n" +
		"var ver = \"v1·2·3·4 and 1·2·3·4·5\"\n" +
		"var t = \"10¦04¦05\"\n" +
		"var mac = \"02¦00¦5e¦00¦00¦01\"\n" +
		"var one = \"¦¦1\"\n" +
		"var metadata = \"169·254·169·254\"\n" +
		"var proxied = \"198·18·0·7\"\n" + // 15
		"var mapped = \"¦¦ffff¦127·0·0·9\"\n" +
		"var public = \"8·8·8·8\"\n" + // 17
		"var ps = \"[System·Text·Encoding]¦¦ASCII\"\n" +
		"var doc = \"2001¦db8¦¦a\"\n" + // 19
		"var gen = fmt·Sprintf(\"10·%d·%d·%d\", a, b, c)\n" + // 20
		"var lo = fmt·Sprintf(\"127·0·0·%d\", n)\n" +
		"var aws = \"ip¬10¬0¬1¬23·ec2·internal\"\n" + // 22
		"var awsLo = \"ip¬127¬0¬1¬23·ec2·internal\"\n" +
		"var awsGen = fmt·Sprintf(\"ip¬10¬%d¬%d¬%d\", a, b, c)\n" + // 24
		"var notAWS = \"skip¬10¬0¬1¬23 and ip¬10¬0¬1\"\n")
	want := strings.Split(unhide.Replace("3: 10·0·0·5 5: fd00¦¦5 8: 192·168·0·0/16 15: 198·18·0·7 17: 8·8·8·8 19: 2001¦db8¦¦a 20: 10·%d·%d·%d 22: ip¬10¬0¬1¬23 24: ip¬10¬%d¬%d¬%d"), " ")
	expect := func(path string, skip string) []string {
		var out []string
		for i := 0; i+1 < len(want); i += 2 {
			if want[i+1] != skip {
				out = append(out, path+":"+want[i]+" "+want[i+1])
			}
		}
		return out
	}
	if got := scanFile("cluster/planted_test.go", []byte(planted)); !slices.Equal(got, expect("cluster/planted_test.go", "")) {
		t.Errorf("scan of the planted file:\n got %q\nwant %q", got, expect("cluster/planted_test.go", ""))
	}
	// A file-scoped exception holds in its file only.
	doc := unhide.Replace("2001¦db8¦¦a")
	if got := scanFile("nodeconfig/nodeconfig_test.go", []byte(planted)); !slices.Equal(got, expect("nodeconfig/nodeconfig_test.go", doc)) {
		t.Errorf("the documentation prefix is allowed in nodeconfig_test.go only:\n got %q\nwant %q", got, expect("nodeconfig/nodeconfig_test.go", doc))
	}
}
