package cluster

import (
	"fmt"
	"github.com/wmcon/wmcon/model"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/wmcon/wmcon/config"
)

// ParseBYOH reads windows-instances. WMCO panics on a value without '=', keeps trailing newlines and
// accepts an empty user; here each of those, and any address or user model.CheckBYOHAddress and
// CheckBYOHUser refuse, is refused with a sentence naming the entry, and the valid entries are still returned.
func ParseBYOH(data map[string]string) ([]model.BYOHInstance, []string) {
	var out []model.BYOHInstance
	var problems []string
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, addr := range keys {
		user, err := parseBYOHEntry(addr, data[addr])
		if err != nil {
			problems = append(problems, model.BYOHProblem(addr, err))
			continue
		}
		out = append(out, model.BYOHInstance{Address: addr, User: user})
	}
	return out, problems
}

func parseBYOHEntry(addr, value string) (string, error) {
	if err := model.CheckBYOHAddress(addr); err != nil {
		return "", err
	}
	if value != strings.TrimSpace(value) {
		return "", fmt.Errorf("the value has leading or trailing white space (often a trailing newline): write exactly username=<name>")
	}
	name, ok := strings.CutPrefix(value, "username=")
	if !ok {
		return "", fmt.Errorf("the value must be username=<name>, found %q", value)
	}
	if err := model.CheckBYOHUser(name); err != nil {
		return "", fmt.Errorf("%w: write username=<name>", err)
	}
	return name, nil
}

func byohInfo(cms []*corev1.ConfigMap) ([]model.BYOHInstance, []string) {
	for _, cm := range cms {
		if cm.Name == config.BYOHConfigMap {
			return ParseBYOH(cm.Data)
		}
	}
	return nil, nil
}
