package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/model"
)

// Resolver looks host names up; net.DefaultResolver has it, tests give a table.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// BYOHProblem is one entry of windows-instances that WMCO would mishandle, with how to fix it.
type BYOHProblem struct {
	Address string `json:"address"`
	Problem string `json:"problem"`
}

func (p BYOHProblem) String() string { return fmt.Sprintf("entry %q: %s", p.Address, p.Problem) }

// ValidateBYOH checks every entry of windows-instances: the value form, the address (IPv4, or a name that
// resolves to IPv4), and duplicates (the same address twice, or a name and the address it resolves to).
func ValidateBYOH(ctx context.Context, res Resolver, data map[string]string) []BYOHProblem {
	var problems []BYOHProblem
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	owner := map[string]string{} // IPv4 → the entry it came from
	for _, addr := range keys {
		if _, err := parseBYOHEntry(addr, data[addr]); err != nil {
			problems = append(problems, BYOHProblem{addr, err.Error()})
			continue
		}
		ips, err := byohAddresses(ctx, res, addr)
		if err != nil {
			problems = append(problems, BYOHProblem{addr, err.Error()})
			continue
		}
		for _, ip := range ips {
			if other, ok := owner[ip]; ok && other != addr {
				problems = append(problems, BYOHProblem{addr, fmt.Sprintf("the same host as entry %q (%s): keep one of them", other, ip)})
				break
			}
			owner[ip] = addr
		}
	}
	return problems
}

// BYOHStallWarning says, when any entry is wrong, that WMCO configures no host of windows-instances until it is
// fixed: its ConfigMap controller parses every entry first and stops at the first bad one, so one bad entry
// stalls every host. "" when there is no problem.
func BYOHStallWarning(problems []BYOHProblem, entries int) string {
	if len(problems) == 0 {
		return ""
	}
	return fmt.Sprintf("WMCO configures none of the %d hosts of %s while any entry is wrong (it stops at the first bad one): "+
		"fix or remove the %d wrong entries (wmcon byoh remove ADDRESS)", entries, config.BYOHConfigMap, len(problems))
}

// byohAddresses is the entry's IPv4 address, or those its name resolves to; each must be a host's.
func byohAddresses(ctx context.Context, res Resolver, addr string) ([]string, error) {
	if err := model.CheckBYOHAddress(addr); err != nil {
		return nil, err
	}
	if ip := net.ParseIP(addr); ip != nil {
		return []string{ip.To4().String()}, nil
	}
	found, err := res.LookupIPAddr(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("the name does not resolve (%v): use the host's IPv4 address or fix DNS", err)
	}
	var v4 []string
	for _, a := range found {
		if a.IP.To4() == nil {
			continue
		}
		if err := model.CheckHostIPv4(a.IP); err != nil {
			return nil, fmt.Errorf("the name resolves to an address that is not a host's: %w", err)
		}
		v4 = append(v4, a.IP.To4().String())
	}
	if len(v4) == 0 {
		return nil, errors.New("the name resolves to no IPv4 address: WMCO needs one; use the host's IPv4 address")
	}
	return v4, nil
}

// BYOHConfigMap edits windows-instances safely: read-modify-write with a retry on conflict, so a concurrent
// writer's entries are never lost, creating the ConfigMap when it is missing.
type BYOHConfigMap struct {
	Kube     kubernetes.Interface
	Resolver Resolver
}

// NewBYOHConfigMap builds it from the session's clients with the system resolver.
func NewBYOHConfigMap(c Clients) *BYOHConfigMap {
	return &BYOHConfigMap{Kube: c.Kube, Resolver: net.DefaultResolver}
}

// Read returns the ConfigMap's data (nil when it does not exist).
func (b *BYOHConfigMap) Read(ctx context.Context) (map[string]string, error) {
	cm, err := b.Kube.CoreV1().ConfigMaps(config.OperatorNamespace).Get(ctx, config.BYOHConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read configmap %s/%s: %w", config.OperatorNamespace, config.BYOHConfigMap, err)
	}
	return cm.Data, nil
}

// Add puts ADDRESS=username=USER in, refusing an entry that would not be valid together with the others.
func (b *BYOHConfigMap) Add(ctx context.Context, address, user string) error {
	if err := model.CheckBYOHAddress(address); err != nil {
		return fmt.Errorf("%q: not added: %w", address, err)
	}
	if err := model.CheckBYOHUser(user); err != nil {
		return fmt.Errorf("user %q for %s: not added: %w; give a plain user name (e.g. Administrator)", user, address, err)
	}
	return b.edit(ctx, func(data map[string]string) error {
		if old, ok := data[address]; ok {
			return fmt.Errorf("%s is already in %s (%s): remove it first to change it", address, config.BYOHConfigMap, old)
		}
		before := map[BYOHProblem]bool{}
		for _, p := range ValidateBYOH(ctx, b.Resolver, data) {
			before[p] = true
		}
		data[address] = "username=" + user
		// Problems the other entries already had are theirs (wmcon keeps them as they are); any new one
		// is the new entry's, whichever entry it is reported on.
		for _, p := range ValidateBYOH(ctx, b.Resolver, data) {
			if !before[p] {
				return fmt.Errorf("%s %s: not added (%s)", address, data[address], p)
			}
		}
		return nil
	})
}

// Remove deletes an entry; an address that is not there is an error listing those that are.
func (b *BYOHConfigMap) Remove(ctx context.Context, address string) error {
	return b.edit(ctx, func(data map[string]string) error {
		if err := entryIn(data, address); err != nil {
			return err
		}
		delete(data, address)
		return nil
	})
}

// HasEntry is nil when address is an entry, else Remove's error: asked before a removal is confirmed, so
// nobody confirms removing what is not there.
func (b *BYOHConfigMap) HasEntry(ctx context.Context, address string) error {
	data, err := b.Read(ctx)
	if err != nil {
		return err
	}
	return entryIn(data, address)
}

// entryIn is nil when address is an entry of data, else an error listing the entries there are.
func entryIn(data map[string]string, address string) error {
	if _, ok := data[address]; ok {
		return nil
	}
	var have []string
	for k := range data {
		have = append(have, k)
	}
	sort.Strings(have) // a map's order changes from run to run
	return fmt.Errorf("%s is not in %s (entries: %s)", address, config.BYOHConfigMap, listOrNone(have))
}

// editBackoff allows many concurrent writers (each conflict means another writer got through).
var editBackoff = wait.Backoff{Steps: 20, Duration: 10 * time.Millisecond, Factor: 1.5, Jitter: 0.5, Cap: time.Second}

// edit applies change to the current data and writes it, retrying from a fresh read on a conflict.
func (b *BYOHConfigMap) edit(ctx context.Context, change func(map[string]string) error) error {
	cms := b.Kube.CoreV1().ConfigMaps(config.OperatorNamespace)
	return retry.RetryOnConflict(editBackoff, func() error {
		cm, err := cms.Get(ctx, config.BYOHConfigMap, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: config.BYOHConfigMap, Namespace: config.OperatorNamespace}}
			if err := change(ensureData(cm)); err != nil {
				return err
			}
			_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return apierrors.NewConflict(corev1.Resource("configmaps"), cm.Name, err) // someone created it first: retry
			}
			return wrapWrite(err)
		}
		if err != nil {
			return fmt.Errorf("read configmap %s: %w", config.BYOHConfigMap, err)
		}
		cm = cm.DeepCopy()
		if err := change(ensureData(cm)); err != nil {
			return err
		}
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return wrapWrite(err)
	})
}

func ensureData(cm *corev1.ConfigMap) map[string]string {
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	return cm.Data
}

func wrapWrite(err error) error {
	if err == nil || apierrors.IsConflict(err) {
		return err // a conflict is retried as it is
	}
	return fmt.Errorf("write configmap %s: %w", config.BYOHConfigMap, err)
}
