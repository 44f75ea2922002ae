package cluster_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
)

// tableResolver answers from a table; before, when set, runs on the first lookup of a name.
type tableResolver struct {
	names  map[string][]string
	mu     sync.Mutex
	before map[string]func()
}

func (r *tableResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	r.mu.Lock()
	f := r.before[host]
	delete(r.before, host)
	r.mu.Unlock()
	if f != nil {
		f()
	}
	ips, ok := r.names[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	var out []net.IPAddr
	for _, ip := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(ip)})
	}
	return out, nil
}

var testNames = map[string][]string{
	"win1.example.com": {"127.0.0.11"},
	"win6.example.com": {"::1"},
	"both.example.com": {"::1", "127.0.0.17"},
}

func TestValidateBYOHNamesEveryBadEntry(t *testing.T) {
	res := &tableResolver{names: testNames}
	data := map[string]string{
		"127.0.0.1":        "username=Administrator",
		"127.0.0.2":        "username",
		"127.0.0.3":        "username=",
		"127.0.0.4":        "username=Administrator\n",
		"127.0.0.5":        " username=Administrator",
		"::1":              "username=Administrator",
		"nope.example.com": "username=Administrator",
		"win6.example.com": "username=Administrator",
		"win1.example.com": "username=Administrator",
		"127.0.0.11":       "username=Administrator",
		"both.example.com": "username=capi",
	}
	problems := cluster.ValidateBYOH(context.Background(), res, data)
	got := map[string]string{}
	for _, p := range problems {
		got[p.Address] = p.Problem
	}
	require.Contains(t, got["127.0.0.2"], "must be username=<name>")
	require.Contains(t, got["127.0.0.3"], "the user name is empty")
	require.Contains(t, got["127.0.0.4"], "trailing white space")
	require.Contains(t, got["127.0.0.5"], "leading or trailing white space")
	require.Contains(t, got["::1"], "IPv6 addresses are not supported")
	require.Contains(t, got["nope.example.com"], "does not resolve")
	require.Contains(t, got["win6.example.com"], "no IPv4 address")
	require.Contains(t, got["win1.example.com"], `the same host as entry "127.0.0.11" (127.0.0.11)`)
	require.NotContains(t, got, "127.0.0.1")
	require.NotContains(t, got, "both.example.com", "a name with an IPv4 address among others is fine")
	require.Len(t, problems, 8)
}

func byohEnv(t *testing.T) (kubernetes.Interface, *cluster.BYOHConfigMap, *tableResolver) {
	t.Helper()
	c, err := cluster.NewClients(srv.AdminConfig())
	require.NoError(t, err)
	cms := c.Kube.CoreV1().ConfigMaps(config.OperatorNamespace)
	_ = cms.Delete(context.Background(), config.BYOHConfigMap, metav1.DeleteOptions{})
	t.Cleanup(func() { _ = cms.Delete(context.Background(), config.BYOHConfigMap, metav1.DeleteOptions{}) })
	res := &tableResolver{names: testNames, before: map[string]func(){}}
	return c.Kube, &cluster.BYOHConfigMap{Kube: c.Kube, Resolver: res}, res
}

func TestBYOHAddCreatesKeepsAndRefuses(t *testing.T) {
	kube, b, _ := byohEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, b.Add(ctx, "127.0.0.1", "Administrator")) // creates the ConfigMap
	cm, err := kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(ctx, config.BYOHConfigMap, metav1.GetOptions{})
	require.NoError(t, err)
	// Someone else's entry (even one wmcon finds wrong) and annotations stay through wmcon's edits.
	cm.Data["127.0.0.9"] = "username=ops"
	cm.Annotations = map[string]string{"owner": "ops"}
	_, err = kube.CoreV1().ConfigMaps(config.OperatorNamespace).Update(ctx, cm, metav1.UpdateOptions{})
	require.NoError(t, err)

	require.NoError(t, b.Add(ctx, "win1.example.com", "capi"))
	require.ErrorContains(t, b.Add(ctx, "127.0.0.11", "capi"), `entry "win1.example.com": the same host as entry "127.0.0.11"`)
	require.ErrorContains(t, b.Add(ctx, "::1", "capi"), "IPv6")
	require.ErrorContains(t, b.Add(ctx, "127.0.0.2", ""), "give a plain user name")
	require.ErrorContains(t, b.Add(ctx, "127.0.0.2", "bob\n"), "give a plain user name")
	require.ErrorContains(t, b.Add(ctx, "127.0.0.1", "bob"), "already in windows-instances")
	require.ErrorContains(t, b.Remove(ctx, "127.0.0.99"), "127.0.0.99 is not in windows-instances (entries: 127.0.0.1, 127.0.0.9, win1.example.com)")
	require.NoError(t, b.Remove(ctx, "127.0.0.1"))

	data, err := b.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"127.0.0.9": "username=ops", "win1.example.com": "username=capi"}, data)
	cm, err = kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(ctx, config.BYOHConfigMap, metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "ops", cm.Annotations["owner"])
}

// A writer that changes the ConfigMap between wmcon's read and write makes the API server refuse wmcon's
// update (409 Conflict); wmcon reads again and retries, and the other writer's entry survives.
func TestBYOHAddRetriesOnConflictWithAConcurrentWriter(t *testing.T) {
	kube, b, res := byohEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, b.Add(ctx, "127.0.0.1", "Administrator"))
	wrote := false
	res.before["win1.example.com"] = func() { // runs after wmcon's read, before its write
		cms := kube.CoreV1().ConfigMaps(config.OperatorNamespace)
		cm, err := cms.Get(ctx, config.BYOHConfigMap, metav1.GetOptions{})
		require.NoError(t, err)
		cm.Data["127.0.0.8"] = "username=other"
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		require.NoError(t, err)
		wrote = true
	}
	require.NoError(t, b.Add(ctx, "win1.example.com", "capi"))
	require.True(t, wrote)
	data, err := b.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"127.0.0.1": "username=Administrator", "127.0.0.8": "username=other", "win1.example.com": "username=capi"}, data)

	// Two wmcons racing to create the ConfigMap: both entries end up in it.
	require.NoError(t, kube.CoreV1().ConfigMaps(config.OperatorNamespace).Delete(ctx, config.BYOHConfigMap, metav1.DeleteOptions{}))
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = b.Add(ctx, net.IPv4(10, 1, 0, byte(i+1)).String(), "Administrator")
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	data, err = b.Read(ctx)
	require.NoError(t, err)
	require.Len(t, data, 8)
}
