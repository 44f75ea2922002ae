package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// TestMachineSetGenerateApplyNeverReplacesSilently, on the real API server (issue 22, item 4):
// `machineset generate --apply --name` naming the Linux worker MachineSet is refused and leaves it as it
// was; on a Windows MachineSet of that name it shows the difference (replicas, image, instance type) and
// replaces nothing without --yes — not even to scale it to 0, which deletes its Machines.
func TestMachineSetGenerateApplyNeverReplacesSilently(t *testing.T) {
	server := kubeapi.Start(t)
	audit := filepath.Join(t.TempDir(), "audit.log")
	t.Setenv(actions.AuditEnv, audit)
	ctx := context.Background()
	c, err := cluster.NewClients(server.AdminConfig())
	require.NoError(t, err)
	seedOpenShiftAWS(t, ctx, c, server.AdminConfig().Host)
	admin := server.Kubeconfig("wmcon-ms", "system:masters")
	sets := c.Machine.MachineV1beta1().MachineSets(config.MachineAPINamespace)
	wmcon := func(args ...string) (int, string) {
		code, out, errOut := runWmcon(t, append([]string{"--kubeconfig", admin, "machineset", "generate", "--apply"}, args...)...)
		return code, out + errOut
	}

	// The Linux worker MachineSet, as the installer makes it: 3 replicas, no os-id label.
	const linux = "e2e-x1y2z-worker-us-east-2a"
	labels := map[string]string{config.MachineSetClusterLabel: "e2e-x1y2z", config.MachineSetLabel: linux}
	created, err := sets.Create(ctx, &machinev1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: linux, Namespace: config.MachineAPINamespace},
		Spec: machinev1beta1.MachineSetSpec{Replicas: ptr.To[int32](3), Selector: metav1.LabelSelector{MatchLabels: labels},
			Template: machinev1beta1.MachineTemplateSpec{ObjectMeta: machinev1beta1.ObjectMeta{Labels: labels},
				Spec: machinev1beta1.MachineSpec{ProviderSpec: machinev1beta1.ProviderSpec{Value: &runtime.RawExtension{
					Raw: []byte(`{"apiVersion":"machine.openshift.io/v1beta1","kind":"AWSMachineProviderConfig","ami":{"id":"ami-0rhcos"},"instanceType":"m6i.xlarge"}`)}}}}}},
		metav1.CreateOptions{})
	require.NoError(t, err)

	for _, args := range [][]string{
		{"--name", linux, "--image", "ami-0win2022"},
		{"--name", linux, "--image", "ami-0win2022", "--yes"},
	} {
		code, out := wmcon(args...)
		assert.NotEqual(t, 0, code, "%v: %s", args, out)
		assert.Contains(t, out, "MachineSet "+linux+" exists and is not a Windows MachineSet", "%v", args)
		assert.Contains(t, out, "give another --name")
	}
	after, err := sets.Get(ctx, linux, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, created.ResourceVersion, after.ResourceVersion, "the Linux MachineSet was not touched")
	assert.Equal(t, int32(3), *after.Spec.Replicas)

	// A new Windows MachineSet is created without a question.
	const windows = "e2e-x1y2z-winworker-us-east-2a"
	code, out := wmcon("--image", "ami-0win2022")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "MachineSet "+windows+" created with 1 replicas")

	// Generating it again with other values: the difference is shown, and nothing changes without --yes.
	code, out = wmcon("--image", "ami-0win2025", "--instance-type", "m5a.xlarge", "--replicas", "0")
	assert.NotEqual(t, 0, code, out)
	assert.Contains(t, out, "Replace Windows MachineSet "+windows)
	assert.Contains(t, out, "replicas: 1 → 0")
	assert.Contains(t, out, "image: ami-0win2022 → ami-0win2025")
	assert.Contains(t, out, "instance type: m5a.large → m5a.xlarge")
	assert.Contains(t, out, "not replaced (confirm with --yes)")
	ms, err := sets.Get(ctx, windows, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(1), *ms.Spec.Replicas, "its Machines stay")

	code, out = wmcon("--image", "ami-0win2025", "--instance-type", "m5a.xlarge", "--replicas", "0", "--yes")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "MachineSet "+windows+" replaced, now 0 replicas")
	ms, err = sets.Get(ctx, windows, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(0), *ms.Spec.Replicas)

	// The same values again: nothing to replace, nothing asked.
	code, out = wmcon("--image", "ami-0win2025", "--instance-type", "m5a.xlarge", "--replicas", "0")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "already has this spec: nothing changed")
	assert.NotContains(t, out, "Replace Windows MachineSet")

	// Each --apply was one audited run, refused ones included: one intent, then its outcome.
	outcomes, _ := auditedOnce(t, audit, 0)
	assert.Len(t, outcomes, 6)
	for _, o := range outcomes {
		assert.True(t, strings.HasPrefix(o, request.ActionMachineSetGenerate+" "), o)
	}
}
