package cluster

import (
	"os"
	"testing"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
)

// TestProviderSummaryOfEachPlatform: the MachineSet details read instance size, zone, image and user-data
// secret from the golden Windows MachineSet of each of the five platforms (what machineset generate
// writes and the real CRD accepts).
func TestProviderSummaryOfEachPlatform(t *testing.T) {
	for platform, check := range map[string]func(*testing.T, model.ProviderSummary){
		"aws": func(t *testing.T, p model.ProviderSummary) {
			assert.NotEmpty(t, p.InstanceType)
			assert.NotEmpty(t, p.Zone)
			assert.Regexp(t, `^ami-`, p.Image)
		},
		"azure": func(t *testing.T, p model.ProviderSummary) {
			assert.NotEmpty(t, p.InstanceType)
			assert.Regexp(t, `^MicrosoftWindowsServer:WindowsServer:`, p.Image)
		},
		"gcp": func(t *testing.T, p model.ProviderSummary) {
			assert.NotEmpty(t, p.InstanceType)
			assert.NotEmpty(t, p.Zone)
			assert.NotEmpty(t, p.Image)
		},
		"vsphere": func(t *testing.T, p model.ProviderSummary) {
			assert.Regexp(t, `^\d+ CPUs, \d+ MiB$`, p.InstanceType)
			assert.NotEmpty(t, p.Image, "the template")
		},
		"nutanix": func(t *testing.T, p model.ProviderSummary) {
			assert.Contains(t, p.InstanceType, "vCPUs")
			assert.NotEmpty(t, p.Image)
		},
	} {
		t.Run(platform, func(t *testing.T) {
			raw, err := os.ReadFile("testdata/machineset-" + platform + ".yaml")
			require.NoError(t, err)
			var ms machinev1beta1.MachineSet
			require.NoError(t, yaml.Unmarshal(raw, &ms))
			p := providerSummary(ms.Spec.Template.Spec.ProviderSpec)
			assert.Equal(t, config.UserDataSecret, p.UserDataSecret)
			check(t, p)
		})
	}
	assert.Equal(t, model.ProviderSummary{}, providerSummary(machinev1beta1.ProviderSpec{}), "no providerSpec: nothing")
}
