package userdata_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"

	"github.com/wmcon/wmcon/cluster/userdata"
	"github.com/wmcon/wmcon/nodeconfig/conformance"
	"github.com/wmcon/wmcon/remote/sshkey"
)

// userDataProperty is one thing a user data script does, read from its text so that WMCO's script and
// wmcon's, written differently, can be compared by what they do.
type userDataProperty struct {
	name string
	read func(script string) string // "" = the script does not do it
}

var (
	localPortArg  = regexp.MustCompile(`-LocalPort\s+("?)(\$?\w+)`)
	numberVar     = `\$%s\s*=\s*"?(\d+)"?`
	foreachVar    = `foreach\s*\(\$%s\s+in\s+([\d,\s]+)\)`
	capabilityArg = regexp.MustCompile(`Add-WindowsCapability\s+-Online\s+-Name\s+(\S+)`)
	attemptsArg   = regexp.MustCompile(`\$attempt\s+-(?:lt|ge)\s+(\d+)`)
	sleepArg      = regexp.MustCompile(`Start-Sleep\s+-Seconds\s+(\d+)`)
	ec2Minimum    = regexp.MustCompile(`2\.0\.\d{4}`)
	msiURL        = regexp.MustCompile(`https://s3\.amazonaws\.com/\S+?\.msi`)
	sshdRestart   = regexp.MustCompile(`Restart-Service\s+(-Name\s+)?sshd`)
)

var userDataProperties = []userDataProperty{
	{"wrapper", func(s string) string {
		if strings.HasPrefix(s, "<powershell>") && strings.HasSuffix(s, "</powershell>\n<persist>true</persist>\n") {
			return "<powershell>, persistent"
		}
		return "none"
	}},
	{"authorized key", func(s string) string {
		k, err := sshkey.FindInUserData(s)
		if err != nil {
			return "none: " + err.Error()
		}
		return ssh.FingerprintSHA256(k)
	}},
	{"disabled Administrator", func(s string) string {
		if !strings.Contains(s, "Enable-LocalUser") {
			return ""
		}
		if strings.Contains(s, `"capi"`) || strings.Contains(s, `'capi'`) {
			return "enabled, unless a capi user exists"
		}
		return "enabled"
	}},
	{"Administrator password", func(s string) string {
		switch {
		case regexp.MustCompile(`ConvertTo-SecureString\s+Get-RandomPassword\b`).MatchString(s):
			return `the text "Get-RandomPassword" (the function is named, not called)`
		case strings.Contains(s, "RandomNumberGenerator"):
			return "random"
		}
		return ""
	}},
	{"OpenSSH capability", func(s string) string { return first(capabilityArg, s) }},
	{"OpenSSH install retries", func(s string) string {
		if !strings.Contains(s, "Add-WindowsCapability") || first(attemptsArg, s) == "" {
			return ""
		}
		return first(attemptsArg, s) + " attempts, " + first(sleepArg, s) + " s apart"
	}},
	{"inbound TCP ports", inboundPorts},
	{"sshd", func(s string) string {
		if regexp.MustCompile(`Set-Service\s+-Name\s+sshd\s+-StartupType\s+'?Automatic'?`).MatchString(s) && strings.Contains(s, "Start-Service") {
			return "automatic, started"
		}
		return ""
	}},
	{"sshd logins", func(s string) string {
		if strings.Contains(s, "'PubkeyAuthentication yes'") && strings.Contains(s, "'PasswordAuthentication no'") {
			return "keys only"
		}
		return ""
	}},
	{"authorized keys file", func(s string) string {
		if !strings.Contains(s, "administrators_authorized_keys") {
			return ""
		}
		wmco := strings.Contains(s, "SetAccessRuleProtection($true, $false)") && strings.Contains(s, `"Administrators","FullControl"`) && strings.Contains(s, `"SYSTEM","FullControl"`)
		ours := strings.Contains(s, "/inheritance:r") && strings.Contains(s, "*S-1-5-32-544:F") && strings.Contains(s, "*S-1-5-18:F")
		if wmco || ours {
			return "administrators_authorized_keys, Administrators and SYSTEM only"
		}
		return "administrators_authorized_keys, other access"
	}},
	{"sshd restarted with its settings", func(s string) string {
		if sshdRestart.MatchString(s) {
			return "yes"
		}
		return ""
	}},
	{"stops at the first error", func(s string) string {
		if strings.Contains(s, "$ErrorActionPreference = 'Stop'") {
			return "yes"
		}
		return "no"
	}},
	{"EC2Launch minimum version", func(s string) string {
		if !strings.Contains(s, "add-routes") {
			return ""
		}
		return ec2Minimum.FindString(s)
	}},
	{"EC2Launch installer", func(s string) string { return msiURL.FindString(s) }},
	{"EC2Launch versions compared", func(s string) string {
		switch {
		case strings.Contains(s, "-lt [version]"):
			return "as version numbers"
		case strings.Contains(s, "$currentVersion -lt $EC2LaunchMinimumVersion"):
			return "as text"
		}
		return ""
	}},
	{"EC2Launch installation", func(s string) string {
		switch {
		case strings.Contains(s, "Start-Process -Wait -FilePath msiexec.exe") && strings.Contains(s, "'/qn'"):
			return "quiet, waited for"
		case strings.Contains(s, "msiexec /i"):
			return "interactive msiexec, not waited for"
		}
		return ""
	}},
	{"metadata routes", func(s string) string {
		if strings.Contains(s, "run-task add-routes --persistent") {
			return "run-task add-routes --persistent"
		}
		return ""
	}},
	{"EC2Launch step", func(s string) string {
		routes := strings.Index(s, "run-task add-routes")
		if routes < 0 {
			return ""
		}
		if loc := sshdRestart.FindAllStringIndex(s, -1); len(loc) > 0 && loc[len(loc)-1][0] < routes {
			return "after SSH is set up"
		}
		return "before SSH is set up"
	}},
	{"EC2Launch failure", func(s string) string {
		if !strings.Contains(s, "add-routes") {
			return ""
		}
		if strings.Contains(s, "$ErrorActionPreference = 'Stop'") && !regexp.MustCompile(`(?s)try \{[^}]*EC2Launch.*add-routes.*\} catch \{`).MatchString(s) {
			return "stops the script"
		}
		return "the script goes on"
	}},
}

func first(re *regexp.Regexp, s string) string {
	if m := re.FindStringSubmatch(s); len(m) > 1 {
		return m[1]
	}
	return ""
}

// inboundPorts are the ports the script opens, whether written out, in a variable or in a loop.
func inboundPorts(s string) string {
	seen := map[string]bool{}
	for _, m := range localPortArg.FindAllStringSubmatch(s, -1) {
		arg := m[2]
		if !strings.HasPrefix(arg, "$") {
			seen[arg] = true
			continue
		}
		name := regexp.QuoteMeta(strings.TrimPrefix(arg, "$"))
		if v := first(regexp.MustCompile(strings.ReplaceAll(numberVar, "%s", name)), s); v != "" {
			seen[v] = true
		}
		for _, p := range strings.Split(first(regexp.MustCompile(strings.ReplaceAll(foreachVar, "%s", name)), s), ",") {
			if p = strings.TrimSpace(p); p != "" {
				seen[p] = true
			}
		}
	}
	var ports []string
	for p := range seen {
		ports = append(ports, p)
	}
	sort.Strings(ports)
	return strings.Join(ports, ",")
}

// wmcon's user data does what WMCO 11's does for the same key, property by property, save the allowlisted
// differences (testdata/wmco-11/allowlist.yaml).
func TestUserDataConformsToWMCO11(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(conformance.Dir(), "userdata", "userdata-*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var compared []string
	var found []conformance.Difference
	for _, f := range files {
		platform := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "userdata-"), ".txt")
		artifact := "userdata/" + platform
		compared = append(compared, artifact)
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		wmco := string(b)
		key, err := sshkey.FindInUserData(wmco)
		require.NoError(t, err, "the key in WMCO's %s", artifact)
		ours := string(userdata.ForKey(key, platform))
		for _, p := range userDataProperties {
			if a, b := p.read(wmco), p.read(ours); a != b {
				found = append(found, conformance.Difference{Artifact: artifact, Field: p.name, WMCO: a, Wmcon: b})
			}
		}
	}
	entries, err := conformance.Allowlist()
	require.NoError(t, err)
	unlisted, stale := conformance.Judge(entries, compared, found)
	for _, d := range unlisted {
		t.Errorf("wmcon's user data differs from WMCO 11's (fix wmcon, or list it with its reason in testdata/wmco-11/allowlist.yaml):\n%s", d)
	}
	for _, e := range stale {
		t.Errorf("testdata/wmco-11/allowlist.yaml lists a difference that no longer exists; delete it: %s %s", e.Artifact, e.Field)
	}
}

// The properties read what they claim: each one finds its value in at least one of the two scripts, so a
// detector that matches nothing cannot pass as "no difference".
func TestUserDataPropertiesSeeBothScripts(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(conformance.Dir(), "userdata", "userdata-aws.txt"))
	require.NoError(t, err)
	wmco := string(b)
	key, err := sshkey.FindInUserData(wmco)
	require.NoError(t, err)
	ours := string(userdata.ForKey(key, "AWS"))
	for _, p := range userDataProperties {
		if p.read(wmco) == "" {
			t.Errorf("property %q reads nothing in WMCO's AWS user data", p.name)
		}
		if p.read(ours) == "" {
			t.Errorf("property %q reads nothing in wmcon's AWS user data", p.name)
		}
	}
	if got := inboundPorts(wmco); got != "10250,22,9182" {
		t.Errorf("WMCO's ports read as %q", got)
	}
	if got := inboundPorts(ours); got != "10250,22,9182" {
		t.Errorf("wmcon's ports read as %q", got)
	}
}
