package cli

import (
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
)

// examples are the Example sections of the commands' --help, by command path, for the commands that do
// not set their own next to their flags. Every example is checked against the command's flags by
// TestEveryCommandHasExamples, so a renamed flag cannot leave a stale example behind.
var examples = map[string]string{
	"wmcon": `  wmcon                                  # the console on the current kubeconfig context
  wmcon --demo                           # the console on the built-in demo cluster
  wmcon --demo=fresh                     # a demo cluster where Windows was never set up (try S)
  wmcon --context prod --read-only       # look, change nothing`,
	"wmcon version": `  wmcon version`,
	"wmcon hostkey": `  wmcon hostkey list
  wmcon hostkey forget ip-127-0-1-23.ec2.internal`,
	"wmcon byoh": `  wmcon byoh list
  wmcon byoh add win1.example.com --user Administrator
  wmcon byoh validate --ssh`,
	"wmcon key": `  wmcon key show
  wmcon key generate --out ~/.ssh/wmcon_windows_ed25519`,
	"wmcon machineset": `  wmcon machineset generate --platform aws --image ami-0abcdef1234567890 --apply
  wmcon machineset scale demo-7xk2p-winworker-us-east-1a 2`,
	"wmcon mirrors": `  wmcon mirrors status
  wmcon mirrors apply`,
	"wmcon operator": `  wmcon operator install --wait
  wmcon operator status`,
	"wmcon proxy": `  wmcon proxy status
  wmcon proxy sync --reboot`,
	"wmcon upgrade": `  wmcon upgrade plan
  wmcon upgrade run`,
	"wmcon hostkey forget": `  wmcon hostkey forget ip-127-0-1-23.ec2.internal   # after the host was reinstalled`,
	"wmcon reboot": `  wmcon reboot ip-127-0-1-23.ec2.internal
  wmcon reboot ip-127-0-1-23.ec2.internal --dry-run        # the pods that would go and their budgets
  wmcon reboot -l kubernetes.io/os=windows --max-unavailable 2
  wmcon reboot NODE --on-pdb wait --timeout 30m -o json`,
	"wmcon cordon": `  wmcon cordon ip-127-0-1-23.ec2.internal
  wmcon cordon -l node.kubernetes.io/windows-build=10.0.20348`,
	"wmcon uncordon": `  wmcon uncordon ip-127-0-1-23.ec2.internal
  wmcon uncordon -l kubernetes.io/os=windows`,
	"wmcon drain": `  wmcon drain ip-127-0-1-23.ec2.internal --dry-run
  wmcon drain ip-127-0-1-23.ec2.internal --grace-period 30 --timeout 15m
  wmcon drain NODE --on-pdb disable-eviction --yes-disable-eviction`,
	"wmcon restart-service": `  wmcon restart-service ip-127-0-1-23.ec2.internal kubelet
  wmcon restart-service NODE containerd -o json`,
	"wmcon doctor": `  wmcon doctor
  wmcon doctor -o json | jq '.checks[] | select(.status == "fail")'`,
	"wmcon top": `  wmcon top
  wmcon top ip-127-0-1-23.ec2.internal -o json
  wmcon top --prometheus https://thanos-querier.example.com`,
	"wmcon top pods": `  wmcon top pods -A                                 # every Windows pod, as oc adm top pods -A
  wmcon top pods -n windows-apps --sort-by memory
  wmcon top pods --node ip-127-0-1-23.ec2.internal --containers -o json`,
	"wmcon operator install": `  wmcon operator install --wait
  wmcon operator install --source community-operators --wait      # OKD
  wmcon operator install --approval Manual --approve --wait`,
	"wmcon operator status":    `  wmcon operator status -o json`,
	"wmcon operator uninstall": `  wmcon operator uninstall --yes`,
	"wmcon key show":           `  wmcon key show`,
	"wmcon key create": `  wmcon key create --from-file ~/.ssh/wmcon_windows_ed25519
  wmcon key create --from-file new.pem --yes     # replace a different key (Machine nodes are recreated)`,
	"wmcon key generate": `  wmcon key generate --out ~/.ssh/wmcon_windows_ed25519
  wmcon key generate --type rsa --out ./windows_rsa`,
	"wmcon machineset generate": `  wmcon machineset generate --platform aws --image ami-0abcdef1234567890
  wmcon machineset generate --platform vsphere --image windows-golden-2022 --name winws -o yaml
  wmcon machineset generate --platform azure --image MicrosoftWindowsServer:WindowsServer:2022-datacenter-smalldisk:latest --apply`,
	"wmcon machineset scale":  `  wmcon machineset scale demo-7xk2p-winworker-us-east-1a 3`,
	"wmcon machineset delete": `  wmcon machineset delete demo-7xk2p-winworker-us-east-1a --yes`,
	"wmcon byoh list":         `  wmcon byoh list -o json`,
	"wmcon byoh validate": `  wmcon byoh validate
  wmcon byoh validate --ssh          # also log in to each host as its user`,
	"wmcon byoh add":    `  wmcon byoh add win1.example.com --user Administrator`,
	"wmcon byoh remove": `  wmcon byoh remove win1.example.com --yes`,
	"wmcon mirrors render": `  wmcon mirrors render -f idms.yaml --pull-secret pull-secret.json -o ./hosts
  wmcon mirrors render -o ./hosts                 # from the cluster's mirror sets`,
	"wmcon mirrors status": `  wmcon mirrors status
  wmcon mirrors status ip-127-0-1-23.ec2.internal -o json`,
	"wmcon mirrors apply": `  wmcon mirrors apply
  wmcon mirrors apply NODE --concurrency 1`,
	"wmcon proxy status": `  wmcon proxy status -o json`,
	"wmcon proxy sync": `  wmcon proxy sync
  wmcon proxy sync NODE --reboot --max-unavailable 1`,
	"wmcon upgrade plan": `  wmcon upgrade plan
  wmcon upgrade plan --payload ./payload`,
	"wmcon upgrade run": `  wmcon upgrade run                       # every node behind, one at a time
  wmcon upgrade run NODE --payload-image quay.io/example/wmco:11.0.1
  wmcon upgrade run --watch               # follow the operator upgrading its own nodes`,
	"wmcon configure": `  wmcon configure --address win1.example.com --user Administrator --dry-run
  wmcon configure --address win1.example.com --payload ./payload
  wmcon configure ip-127-0-1-23.ec2.internal --watch          # a node WMCO owns: follow it
  wmcon configure --render-services --platform AWS --api-server https://api-int.example.test:6443 -o json`,
	"wmcon deconfigure": `  wmcon deconfigure ip-127-0-1-23.ec2.internal`,
	"wmcon setup": `  wmcon setup                                   # show the first step's plan, change nothing
  wmcon setup --standalone --key ~/.ssh/wmcon_windows_ed25519 --byoh win1.example.com=Administrator --yes
  wmcon setup --generate-key --machineset-image ami-0abcdef1234567890 --smoke-test --yes -o json`,
}

// addExamples gives each command without an Example its entry in examples.
func addExamples(root *cobra.Command) {
	walk(root, func(c *cobra.Command) {
		if c.Example == "" {
			c.Example = examples[c.CommandPath()]
		}
	})
}

// walk calls f on cmd and every command under it.
func walk(cmd *cobra.Command, f func(*cobra.Command)) {
	f(cmd)
	for _, c := range cmd.Commands() {
		walk(c, f)
	}
}

// exampleLines are the command lines of an Example: trimmed, without comments.
func exampleLines(example string) []string {
	var out []string
	for _, l := range strings.Split(example, "\n") {
		l, _, _ = strings.Cut(l, "#")
		l, _, _ = strings.Cut(l, "|")
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// pluginName is the name wmcon was called by, as help text shows it: kubectl and oc run a plugin found on
// PATH as kubectl-wmcon or oc-wmcon (make install links both), and their users type "kubectl wmcon".
func pluginName(argv0 string) string {
	base := filepath.Base(argv0)
	for _, host := range []string{"kubectl", "oc"} {
		if base == host+"-wmcon" {
			return host + " wmcon"
		}
	}
	return "wmcon"
}

// commandWord is wmcon as a command in help text: at the start of a line or after a space, a parenthesis
// or a backquote, and followed by a space or the end (never a path such as ~/.ssh/wmcon_windows_ed25519).
var commandWord = regexp.MustCompile("(^|[\\s(`])wmcon( |$)")

// calledAs makes the help text use the name wmcon was called by (argv0): the usage lines (cobra's display
// name) and the examples and descriptions that name the command.
func calledAs(root *cobra.Command, argv0 string) {
	name := pluginName(argv0)
	if name == "wmcon" {
		return
	}
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[cobra.CommandDisplayNameAnnotation] = name
	walk(root, func(c *cobra.Command) {
		for _, text := range []*string{&c.Example, &c.Long} {
			lines := strings.Split(*text, "\n")
			for i, l := range lines {
				lines[i] = commandWord.ReplaceAllString(l, "${1}"+name+"${2}")
			}
			*text = strings.Join(lines, "\n")
		}
	})
}
