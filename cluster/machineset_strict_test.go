package cluster

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// For every platform wmcon generates MachineSets for: the generated providerSpec decodes strictly into its
// openshift/api type, and the same spec with one unknown field, or a field spelled in another case, is
// refused naming it.
func TestDecodeProviderSpecIsStrictOnEveryPlatform(t *testing.T) {
	for p, c := range MachineSetCases(t) {
		t.Run(string(p), func(t *testing.T) {
			ms, err := GenerateMachineSet(testInfra(p), c.Workers, c.Req)
			require.NoError(t, err)
			raw := ms.Spec.Template.Spec.ProviderSpec.Value.Raw
			_, err = DecodeProviderSpec(p, raw)
			require.NoError(t, err)

			var m map[string]any
			require.NoError(t, json.Unmarshal(raw, &m))
			m["wmconTypo"] = "x"
			bad, err := json.Marshal(m)
			require.NoError(t, err)
			_, err = DecodeProviderSpec(p, bad)
			require.ErrorContains(t, err, `unknown field "wmconTypo"`)

			delete(m, "wmconTypo")
			uds := m["userDataSecret"]
			require.NotNil(t, uds, "the generated spec names its user data secret")
			delete(m, "userDataSecret")
			m["UserDataSecret"] = uds
			wrongCase, err := json.Marshal(m)
			require.NoError(t, err)
			_, err = DecodeProviderSpec(p, wrongCase)
			require.Error(t, err, "a case-insensitive match is refused")
		})
	}
}
