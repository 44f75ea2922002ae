package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMachineSetGenerateOnTheDemos: both demos' Linux worker Machines carry their providerSpec, so a
// Windows MachineSet is built from them (the cluster's platform when --platform is not given) with the
// worker's subnet, security groups and credentials.
func TestMachineSetGenerateOnTheDemos(t *testing.T) {
	for _, demoFlag := range []string{"--demo", "--demo=fresh"} {
		code, out, errOut := runWmcon(t, demoFlag, "machineset", "generate", "--image", "ami-0windows2022")
		require.Equal(t, 0, code, "%s: %s\n%s", demoFlag, out, errOut)
		assert.Contains(t, out, "id: ami-0windows2022", demoFlag)
		assert.Contains(t, out, "demo-7xk2p-subnet-private-us-east-1a", demoFlag)
		assert.Contains(t, out, "demo-7xk2p-node", demoFlag)
		assert.Contains(t, out, "name: aws-cloud-credentials", demoFlag)
		assert.Contains(t, out, "name: windows-user-data", demoFlag)
	}
}
