package setup_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/wmcon/wmcon/actions"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/request"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/testsupport/actiontest"
)

func testAudit(t *testing.T) (*actions.AuditLog, string) {
	path := filepath.Join(t.TempDir(), "audit.log")
	return &actions.AuditLog{Path: path}, path
}

// fakeMachineSets is an AWS cluster with one Linux worker, recording what is applied.
type fakeMachineSets struct {
	existing []*machinev1beta1.MachineSet
	applied  []*machinev1beta1.MachineSet
	scaled   map[string]int32
}

func (f *fakeMachineSets) Inputs(context.Context) (*configv1.Infrastructure, []machinev1beta1.Machine, error) {
	infra := &configv1.Infrastructure{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Status: configv1.InfrastructureStatus{
		InfrastructureName: "t-9x8y7", PlatformStatus: &configv1.PlatformStatus{Type: configv1.AWSPlatformType}}}
	raw, err := json.Marshal(&machinev1beta1.AWSMachineProviderConfig{
		TypeMeta:          metav1.TypeMeta{APIVersion: "machine.openshift.io/v1beta1", Kind: "AWSMachineProviderConfig"},
		AMI:               machinev1beta1.AWSResourceReference{ID: ptr.To("ami-rhcos")},
		InstanceType:      "m6i.xlarge",
		UserDataSecret:    &corev1.LocalObjectReference{Name: "worker-user-data"},
		CredentialsSecret: &corev1.LocalObjectReference{Name: "aws-cloud-credentials"},
		Subnet:            machinev1beta1.AWSResourceReference{Filters: []machinev1beta1.Filter{{Name: "tag:Name", Values: []string{"t-9x8y7-subnet-private-us-east-1a"}}}},
		Placement:         machinev1beta1.Placement{Region: "us-east-1", AvailabilityZone: "us-east-1a"},
	})
	if err != nil {
		return nil, nil, err
	}
	worker := machinev1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "t-9x8y7-worker-us-east-1a-x", Namespace: config.MachineAPINamespace,
		Labels: map[string]string{config.MachineRoleLabel: "worker", config.MachineTypeLabel: "worker", config.MachineSetClusterLabel: "t-9x8y7"}},
		Spec: machinev1beta1.MachineSpec{ProviderSpec: machinev1beta1.ProviderSpec{Value: &runtime.RawExtension{Raw: raw}}}}
	return infra, []machinev1beta1.Machine{worker}, nil
}

func (f *fakeMachineSets) Get(_ context.Context, name string) (*machinev1beta1.MachineSet, error) {
	for _, ms := range f.existing {
		if ms.Name == name {
			return ms, nil
		}
	}
	return nil, nil
}
func (f *fakeMachineSets) Create(_ context.Context, ms *machinev1beta1.MachineSet) error {
	f.applied = append(f.applied, ms)
	return nil
}
func (f *fakeMachineSets) Replace(_ context.Context, _, ms *machinev1beta1.MachineSet) error {
	f.applied = append(f.applied, ms)
	return nil
}
func (f *fakeMachineSets) Scale(_ context.Context, name string, n int32) (int32, error) {
	f.scaled[name] = n
	return 1, nil
}
func (f *fakeMachineSets) Delete(context.Context, string) error              { return nil }
func (f *fakeMachineSets) NodesOf(context.Context, string) ([]string, error) { return nil, nil }

// The console's new-MachineSet request shows the generated YAML in its question and applies only once
// confirmed; every run is audited by the Runner.
func TestMachineSetGenerateRequestAsksWithTheYAML(t *testing.T) {
	for _, answer := range []string{event.ChoiceCancel, event.ChoiceApply} {
		t.Run(answer, func(t *testing.T) {
			ms := &fakeMachineSets{scaled: map[string]int32{}}
			audit, path := testAudit(t)
			runner := actions.Runner{Backends: actions.Backends{Setup: &actions.SetupBackends{MachineSets: ms}, Audit: audit}}
			sink := &actiontest.Recorder{Answer: func(event.Question) string { return answer }}
			err := runner.Run(context.Background(), request.MachineSetGenerate{Image: "ami-0win2022"}, sink)
			require.NoError(t, err)
			qs := sink.Asked()
			require.Len(t, qs, 1)
			assert.Equal(t, "Create MachineSet t-9x8y7-winworker-us-east-1a with 1 Windows Machines?", qs[0].Title)
			yaml := strings.Join(qs[0].Detail, "\n")
			assert.Contains(t, yaml, "id: ami-0win2022")
			assert.Contains(t, yaml, "name: windows-user-data")
			if answer == event.ChoiceApply {
				require.Len(t, ms.applied, 1)
				assert.Equal(t, "t-9x8y7-winworker-us-east-1a", ms.applied[0].Name)
			} else {
				assert.Empty(t, ms.applied, "nothing applied without confirmation")
			}
			assert.FileExists(t, path, "the run was audited")
		})
	}
}

// The wizard's MachineSet request comes confirmed (its plan was shown and confirmed): it is applied
// without a second question, and audited.
func TestConfirmedMachineSetGenerateAsksNothing(t *testing.T) {
	ms := &fakeMachineSets{scaled: map[string]int32{}}
	audit, path := testAudit(t)
	runner := actions.Runner{Backends: actions.Backends{Setup: &actions.SetupBackends{MachineSets: ms}, Audit: audit}}
	sink := &actiontest.Recorder{Answer: func(event.Question) string { return event.ChoiceCancel }}
	require.NoError(t, runner.Run(context.Background(), request.MachineSetGenerate{Image: "ami-0win2022", Confirmed: true}, sink))
	assert.Empty(t, sink.Asked(), "asked nothing")
	require.Len(t, ms.applied, 1)
	assert.FileExists(t, path, "the run was audited")
}

func TestMachineSetGenerateRequestRefusesBadInput(t *testing.T) {
	ms := &fakeMachineSets{scaled: map[string]int32{}}
	audit, _ := testAudit(t)
	runner := actions.Runner{Backends: actions.Backends{Setup: &actions.SetupBackends{MachineSets: ms}, Audit: audit}}
	err := runner.Run(context.Background(), request.MachineSetGenerate{Platform: "openstack", Image: "x"}, &actiontest.Recorder{})
	assert.ErrorContains(t, err, `platform "openstack": use aws, azure, vsphere, gcp or nutanix`)
	err = runner.Run(context.Background(), request.MachineSetGenerate{}, &actiontest.Recorder{})
	assert.Error(t, err, "no image")
	assert.Empty(t, ms.applied)

	err = actions.Runner{Backends: actions.Backends{Audit: audit}}.Run(context.Background(), request.MachineSetScale{Name: "x", Replicas: 1}, &actiontest.Recorder{})
	assert.ErrorContains(t, err, "not available here")
}

// A preview shows the MachineSet's YAML and the command, asks nothing, applies nothing and is not audited.
func TestMachineSetGeneratePreviewChangesNothing(t *testing.T) {
	ms := &fakeMachineSets{scaled: map[string]int32{}}
	audit, path := testAudit(t)
	runner := actions.Runner{Backends: actions.Backends{Setup: &actions.SetupBackends{MachineSets: ms}, Audit: audit}}
	plan := preview(t, context.Background(), runner, request.MachineSetGenerate{Image: "ami-0win2022", Preview: true})
	assert.Equal(t, "MachineSet t-9x8y7-winworker-us-east-1a with 1 Windows Machines", plan.Title)
	assert.Contains(t, plan.YAML, "id: ami-0win2022")
	assert.Contains(t, plan.YAML, "machine.openshift.io/os-id: Windows")
	assert.Equal(t, []string{"wmcon machineset generate --apply --name t-9x8y7-winworker-us-east-1a --image ami-0win2022"}, plan.Commands)
	assert.Empty(t, ms.applied)
	assert.NoFileExists(t, path, "a preview is not audited")
}

// existingSet is a MachineSet of the name the request generates: a Windows one (os-id label) or not.
func existingSet(windows bool, replicas int32) *machinev1beta1.MachineSet {
	ms := &machinev1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "t-9x8y7-winworker-us-east-1a", Namespace: config.MachineAPINamespace},
		Spec: machinev1beta1.MachineSetSpec{Replicas: ptr.To(replicas), Template: machinev1beta1.MachineTemplateSpec{
			Spec: machinev1beta1.MachineSpec{ProviderSpec: machinev1beta1.ProviderSpec{Value: &runtime.RawExtension{
				Raw: []byte(`{"ami":{"id":"ami-0win2019"},"instanceType":"m5a.large"}`)}}}}}}
	if windows {
		ms.Spec.Template.Labels = map[string]string{config.MachineOSIDLabel: config.WindowsOSID}
	}
	return ms
}

// In the console, generating a MachineSet whose name a Windows MachineSet has asks to *replace* it, with
// what changes first; the preview and its command say so too. One whose name a MachineSet that is not
// Windows has is refused before any question, and nothing is applied.
func TestMachineSetGenerateRequestReplacesOnlyAWindowsSet(t *testing.T) {
	ms := &fakeMachineSets{scaled: map[string]int32{}, existing: []*machinev1beta1.MachineSet{existingSet(true, 2)}}
	audit, _ := testAudit(t)
	runner := actions.Runner{Backends: actions.Backends{Setup: &actions.SetupBackends{MachineSets: ms}, Audit: audit}}
	sink := &actiontest.Recorder{Answer: func(event.Question) string { return event.ChoiceCancel }}
	require.NoError(t, runner.Run(context.Background(), request.MachineSetGenerate{Image: "ami-0win2022"}, sink))
	qs := sink.Asked()
	require.Len(t, qs, 1)
	assert.Equal(t, "Replace Windows MachineSet t-9x8y7-winworker-us-east-1a (now 2 replicas, then 1)?", qs[0].Title)
	assert.Equal(t, []string{"MachineSet t-9x8y7-winworker-us-east-1a exists: replacing its spec changes", "  replicas: 2 → 1",
		"  image: ami-0win2019 → ami-0win2022", "  zone: (none) → us-east-1a"}, qs[0].Detail[:4])
	assert.Contains(t, strings.Join(qs[0].Detail, "\n"), "id: ami-0win2022", "then the YAML")
	assert.Empty(t, ms.applied, "declined: nothing applied")

	plan := preview(t, context.Background(), runner, request.MachineSetGenerate{Image: "ami-0win2022", Preview: true})
	assert.Contains(t, plan.Summary[0], "replace the spec of Windows MachineSet openshift-machine-api/t-9x8y7-winworker-us-east-1a: replicas: 2 → 1")
	assert.Equal(t, []string{"wmcon machineset generate --apply --name t-9x8y7-winworker-us-east-1a --image ami-0win2022 --yes"}, plan.Commands)

	sink = &actiontest.Recorder{Answer: func(event.Question) string { return event.ChoiceApply }}
	require.NoError(t, runner.Run(context.Background(), request.MachineSetGenerate{Image: "ami-0win2022"}, sink))
	require.Len(t, ms.applied, 1, "replaced once confirmed")

	linux := &fakeMachineSets{scaled: map[string]int32{}, existing: []*machinev1beta1.MachineSet{existingSet(false, 3)}}
	runner.Backends.Setup.MachineSets = linux
	sink = &actiontest.Recorder{Answer: func(event.Question) string { return event.ChoiceApply }}
	for _, req := range []request.MachineSetGenerate{{Image: "ami-0win2022"}, {Image: "ami-0win2022", Confirmed: true}, {Image: "ami-0win2022", Preview: true}} {
		err := runner.Run(context.Background(), req, sink)
		require.ErrorContains(t, err, "MachineSet t-9x8y7-winworker-us-east-1a exists and is not a Windows MachineSet")
	}
	assert.Empty(t, sink.Asked(), "refused before asking")
	assert.Empty(t, linux.applied)
}

type fakeBYOH struct{ added []string }

func (f *fakeBYOH) Add(_ context.Context, address, user string) error {
	f.added = append(f.added, address+"="+user)
	return nil
}
func (f *fakeBYOH) Remove(context.Context, string) error { return nil }

// Adding a BYOH host tries SSH first; a host wmcon cannot reach from here is still added, with a warning.
func TestBYOHAddTriesSSHButDoesNotRequireIt(t *testing.T) {
	byoh := &fakeBYOH{}
	audit, _ := testAudit(t)
	runner := actions.Runner{Backends: actions.Backends{Setup: &actions.SetupBackends{BYOH: byoh}, Audit: audit,
		Configure: &actions.ConfigureBackends{HostAt: func(context.Context, string, string) (remote.Host, error) {
			return nil, errors.New("dial tcp 127.0.0.97:22: connection refused")
		}}}}
	rec := &actiontest.Recorder{}
	require.NoError(t, runner.Run(context.Background(), request.BYOHAdd{Address: "127.0.0.97", User: "Administrator"}, rec))
	assert.Equal(t, []string{"127.0.0.97=Administrator"}, byoh.added)
	assert.Contains(t, rec.Dump(), "could not log in from here (dial tcp 127.0.0.97:22: connection refused)")
	assert.Equal(t, event.Succeeded, rec.Final(t, "127.0.0.97").Outcome)
}
