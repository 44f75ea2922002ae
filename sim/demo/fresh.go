package demo

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/sim/olm"
)

// CatalogVersion is the WMCO version the fresh demo's catalog installs.
const CatalogVersion = OperatorVersion

// freshKubeObjects are the core objects of a cluster where Windows was never set up: the Linux nodes, the
// namespaces, the pull secret and the proxy's CA bundle; no operator namespace, key, user data or BYOH list.
func freshKubeObjects(now time.Time) []runtime.Object {
	day := 24 * time.Hour
	objs := []runtime.Object{
		&corev1.Namespace{ObjectMeta: meta(config.MachineAPINamespace, "", 40*day, now)},
		&corev1.Namespace{ObjectMeta: meta(config.OpenShiftConfigNS, "", 40*day, now)},
		&corev1.Namespace{ObjectMeta: meta(appsNamespace, "", 20*day, now)},
		secret(config.PullSecret, config.OpenShiftConfigNS, config.PullSecretKey, pullSecretJSON(), corev1.SecretTypeDockerConfigJson, now),
		trustedCA(now),
	}
	for i := 0; i < 3; i++ {
		objs = append(objs, linuxNode(fmt.Sprintf("ip-127-0-1-%d.ec2.internal", 10+i), fmt.Sprintf("127.0.1.%d", 10+i), "master", 40*day, now))
		objs = append(objs, linuxNode(fmt.Sprintf("ip-127-0-1-%d.ec2.internal", 20+i), fmt.Sprintf("127.0.1.%d", 20+i), "worker", 40*day-time.Hour, now))
	}
	return objs
}

// freshMachineObjects are the Linux workers' MachineSet and Machines (what a Windows MachineSet copies).
func freshMachineObjects(now time.Time) []runtime.Object {
	return machineObjects(nil, now)[2:] // without the two Windows MachineSets
}

// seedCatalog offers WMCO in redhat-operators (channel stable), for wmcon operator install to progress
// through the OLM stand-in.
func (c *Cluster) seedCatalog() error {
	c.olm = olm.New(c.Clients, olm.Options{Catalogs: []olm.Catalog{{Name: cluster.DefaultCatalogSource,
		Channels: []string{"stable"}, DefaultChannel: "stable", Version: CatalogVersion}}})
	if err := c.olm.Seed(context.Background()); err != nil {
		return fmt.Errorf("demo catalog: %w", err)
	}
	return nil
}

// DefaultBYOHKeyFile is where the fresh demo keeps the key its bare hosts accept, unless told otherwise.
func DefaultBYOHKeyFile() string {
	dir, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(dir) {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "wmcon", "demo", "byoh_ed25519")
}

// byohKey loads the fresh demo's BYOH key from path (DefaultBYOHKeyFile when ""), creating it when missing.
func byohKey(path string) ([]byte, ssh.Signer, error) {
	if path == "" {
		path = DefaultBYOHKeyFile()
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return createKeyFile(path)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("demo BYOH key %s: %w", path, err)
	}
	signer, err := ssh.ParsePrivateKey(data)
	if err != nil {
		return nil, nil, fmt.Errorf("demo BYOH key %s: %w (remove it and a new one is made)", path, err)
	}
	return data, signer, nil
}

func createKeyFile(path string) ([]byte, ssh.Signer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate demo BYOH key: %w", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "wmcon demo BYOH hosts")
	if err != nil {
		return nil, nil, fmt.Errorf("encode demo BYOH key: %w", err)
	}
	data := pem.EncodeToMemory(block)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, fmt.Errorf("demo BYOH key: %w", err)
	}
	// Written beside and renamed into place: two demos starting at once both end with one whole key.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".byoh-key-*")
	if err != nil {
		return nil, nil, fmt.Errorf("demo BYOH key: %w", err)
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Link(tmp.Name(), path) // never replaces a key another demo wrote meanwhile
	}
	_ = os.Remove(tmp.Name())
	if werr != nil && !errors.Is(werr, fs.ErrExist) {
		return nil, nil, fmt.Errorf("demo BYOH key %s: %w", path, werr)
	}
	return byohKey(path)
}
