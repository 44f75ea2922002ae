package contract_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/nodeconfig/contract"
)

// A host that runs the contract's command has no drift, whatever its pre-scripts gave the variables and
// whatever the case of its paths; a changed, missing or extra flag is named with both sides.
func TestDriftNamesTheDifferingFlag(t *testing.T) {
	d := wmcoAWS(t)
	kubelet, hon := service(t, d, "kubelet"), service(t, d, "hybrid-overlay-node")
	n := node(nil)
	resolved, err := contract.Resolve(kubelet, n, map[string]string{"HOSTNAME_OVERRIDE": n.Name, "NODE_IP": "127.0.0.8"})
	require.NoError(t, err)

	diffs, err := contract.Drift(kubelet, n, strings.ToUpper(resolved[:3])+resolved[3:])
	require.NoError(t, err)
	assert.Empty(t, diffs, "the contract's command, the variables filled by the host")

	diffs, err = contract.Drift(kubelet, n, strings.Replace(resolved, "--v=2", "--v=4", 1)+" --extra")
	require.NoError(t, err)
	assert.Equal(t, []contract.Difference{{Flag: "--v", Want: "--v=2", Got: "--v=4"}, {Flag: "--extra", Got: "--extra"}}, diffs)
	assert.Equal(t, "--v: the contract has --v=2, the host runs --v=4", diffs[0].String())

	diffs, err = contract.Drift(kubelet, n, strings.Replace(resolved, " --windows-priorityclass=ABOVE_NORMAL_PRIORITY_CLASS", "", 1))
	require.NoError(t, err)
	assert.Equal(t, []contract.Difference{{Flag: "--windows-priorityclass", Want: "--windows-priorityclass=ABOVE_NORMAL_PRIORITY_CLASS"}}, diffs)

	// Node variables come from the Node: another node's name is drift.
	honCmd, err := contract.Resolve(hon, n, nil)
	require.NoError(t, err)
	diffs, err = contract.Drift(hon, n, strings.Replace(honCmd, n.Name, "other-node", 1))
	require.NoError(t, err)
	assert.Equal(t, []contract.Difference{{Flag: "--node", Want: "--node " + n.Name, Got: "--node other-node"}}, diffs)

	// The same arguments in another order still differ from what WMCO's daemon registers.
	words := strings.Fields(honCmd)
	words[1], words[2], words[3], words[4] = words[3], words[4], words[1], words[2]
	diffs, err = contract.Drift(hon, n, strings.Join(words, " "))
	require.NoError(t, err)
	require.Len(t, diffs, 1)
	assert.Equal(t, "order", diffs[0].Flag)

	_, err = contract.Drift(hon, nil, honCmd)
	assert.ErrorContains(t, err, "NODE_NAME", "a node variable without the Node")
}
