package setup_test

import (
	"context"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wmcon/wmcon/actions/diagnosis"
	"github.com/wmcon/wmcon/actions/event"
	"github.com/wmcon/wmcon/actions/setup"
	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/cluster/userdata"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/remote/sshkey"
	"github.com/wmcon/wmcon/testsupport/actiontest"
	"github.com/wmcon/wmcon/testsupport/kubeapi"
)

// Standalone (no WMCO), against the real API server: installing a key writes windows-user-data for the
// cluster's platform, replacing the key rewrites it (the question says so), installing the same key again
// restores a user data someone changed, a read-only session writes nothing, and the doctor agrees at
// each point.
func TestStandaloneKeyKeepsUserDataInStep(t *testing.T) {
	srv := kubeapi.Start(t)
	c, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := &actiontest.DoctorCluster{T: t, Ctx: ctx, Server: srv, C: c}
	d.SeedCluster(configv1.GCPPlatformType)
	keys, olm := cluster.NewKeys(c), cluster.NewOLM(c)

	doctorSays := func(status diagnosis.CheckStatus, detail string) diagnosis.Check {
		t.Helper()
		ud := actiontest.Check(t, d.Doctor(c), "user-data")
		assert.Equal(t, status, ud.Status, ud.Detail)
		assert.Contains(t, ud.Detail, detail)
		return ud
	}
	ud := doctorSays(diagnosis.CheckWarn, "is missing")
	assert.Contains(t, ud.Fix, "wmcon key create --from-file", "standalone, the key command writes it")

	script := func() []byte {
		t.Helper()
		s, err := c.Kube.CoreV1().Secrets(config.MachineAPINamespace).Get(ctx, config.UserDataSecret, metav1.GetOptions{})
		require.NoError(t, err)
		return s.Data[config.UserDataSecretKey]
	}
	first, firstPub, err := cluster.GenerateKey("ed25519")
	require.NoError(t, err)
	rec := &actiontest.Recorder{}
	require.NoError(t, setup.InstallKey(ctx, keys, olm, first, rec))
	assert.Equal(t, string(userdata.ForKey(firstPub, "GCP")), string(script()), "rendered for the cluster's platform (GCP: no wrapper)")
	assert.Contains(t, lastEvent(rec).Message, config.UserDataSecret+" authorizes it")
	assert.Contains(t, rec.DoneOf("user-data"), "created "+config.MachineAPINamespace+"/"+config.UserDataSecret)
	doctorSays(diagnosis.CheckOK, "holds "+config.PrivateKeySecret+"'s public key")

	second, secondPub, err := cluster.GenerateKey("rsa")
	require.NoError(t, err)
	rec = &actiontest.Recorder{Answer: func(event.Question) string { return event.ChoiceReplace }}
	require.NoError(t, setup.InstallKey(ctx, keys, olm, second, rec))
	require.Len(t, rec.Questions, 1)
	assert.Contains(t, strings.Join(rec.Questions[0].Detail, "\n"), "wmcon rewrites "+config.MachineAPINamespace+"/"+config.UserDataSecret)
	found, err := sshkey.FindInUserData(string(script()))
	require.NoError(t, err)
	assert.Equal(t, ssh.FingerprintSHA256(secondPub), ssh.FingerprintSHA256(found), "the new key is authorized")
	doctorSays(diagnosis.CheckOK, "holds")

	// Someone puts the AWS form there: the doctor sees GCP would not run it; the same key again repairs it.
	d.Secret(config.MachineAPINamespace, config.UserDataSecret, config.UserDataSecretKey, userdata.ForKey(secondPub, "AWS"))
	ud = doctorSays(diagnosis.CheckFail, "new GCP Machines will not run it")
	assert.Contains(t, ud.Fix, "wmcon key create --from-file")
	rec = &actiontest.Recorder{}
	require.NoError(t, setup.InstallKey(ctx, keys, olm, second, rec))
	assert.Contains(t, rec.DoneOf("user-data"), "replaced")
	assert.Equal(t, string(userdata.ForKey(secondPub, "GCP")), string(script()))
	rec = &actiontest.Recorder{}
	require.NoError(t, setup.InstallKey(ctx, keys, olm, second, rec))
	assert.Contains(t, rec.DoneOf("user-data"), "already authorizes this key", "nothing rewritten when it is right")

	// Read-only: the replacement is refused and nothing changes.
	ro, err := c.ReadOnly()
	require.NoError(t, err)
	rec = &actiontest.Recorder{Answer: func(event.Question) string { return event.ChoiceReplace }}
	err = setup.InstallKey(ctx, cluster.NewKeys(ro), cluster.NewOLM(ro), first, rec)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--read-only")
	assert.Equal(t, string(userdata.ForKey(secondPub, "GCP")), string(script()))
}

// With WMCO installed the operator owns the user data: installing a key leaves it alone.
func TestKeyWithWMCOLeavesUserDataToTheOperator(t *testing.T) {
	d := actiontest.NewDoctorCluster(t)
	before, err := d.C.Kube.CoreV1().Secrets(config.MachineAPINamespace).Get(d.Ctx, config.UserDataSecret, metav1.GetOptions{})
	require.NoError(t, err)
	other, _, err := cluster.GenerateKey("ed25519")
	require.NoError(t, err)
	rec := &actiontest.Recorder{Answer: func(event.Question) string { return event.ChoiceReplace }}
	require.NoError(t, setup.InstallKey(d.Ctx, cluster.NewKeys(d.C), cluster.NewOLM(d.C), other, rec))
	assert.Empty(t, rec.DoneOf("user-data"))
	assert.Contains(t, lastEvent(rec).Message, "WMCO regenerates")
	after, err := d.C.Kube.CoreV1().Secrets(config.MachineAPINamespace).Get(d.Ctx, config.UserDataSecret, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, before.ResourceVersion, after.ResourceVersion, "wmcon did not write the operator's secret")
}

func lastEvent(r *actiontest.Recorder) event.Event {
	all := r.All()
	if len(all) == 0 {
		return event.Event{}
	}
	return all[len(all)-1]
}
