package payload

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// imageDir is where WMCO's operator image keeps the payload.
const imageDir = "payload"

// PullOptions tune Pull.
type PullOptions struct {
	CacheDir   string // "" = DefaultCacheDir
	PullSecret []byte // a .dockerconfigjson (the cluster pull secret); nil = anonymous
	Progress   func(done, total int64)
}

// Pull fetches an OCI image, extracts its /payload into the cache directory under the image's digest and
// verifies it as LoadDir does. A digest already extracted and verified is not fetched again. Registries
// on loopback addresses are reached over plain HTTP (tests and the demo); every other one over HTTPS.
func Pull(ctx context.Context, ref string, opts PullOptions) (*Payload, error) {
	cache := opts.CacheDir
	if cache == "" {
		d, err := DefaultCacheDir()
		if err != nil {
			return nil, err
		}
		cache = d
	}
	r, err := parseRef(ref)
	if err != nil {
		return nil, err
	}
	keychain, err := secretKeychain(opts.PullSecret)
	if err != nil {
		return nil, err
	}
	img, err := remote.Image(r, remote.WithContext(ctx), remote.WithAuthFromKeychain(keychain))
	if err != nil {
		return nil, fmt.Errorf("pull payload image %s: %w", ref, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return nil, fmt.Errorf("payload image %s: %w", ref, err)
	}
	dir := filepath.Join(cache, "images", digest.Algorithm+"-"+digest.Hex)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil {
		if err := extract(mutate.Extract(img), dir); err != nil {
			return nil, fmt.Errorf("extract /%s of %s: %w", imageDir, ref, err)
		}
	}
	p, err := LoadDir(filepath.Join(dir, imageDir), cache)
	if err != nil {
		return nil, err
	}
	p.Source = r.Context().Name() + "@" + digest.String()
	return p, nil
}

func parseRef(ref string) (name.Reference, error) {
	var opts []name.Option
	if loopbackRegistry(ref) {
		opts = append(opts, name.Insecure)
	}
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		return nil, fmt.Errorf("payload image %q is not an image reference: %w", ref, err)
	}
	return r, nil
}

func loopbackRegistry(ref string) bool {
	host, _, _ := strings.Cut(ref, "/")
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// extract writes the files under payload/ of the image's flattened file system to dir, through a
// temporary directory renamed into place, so an interrupted pull never looks complete.
func extract(rc io.ReadCloser, dir string) error {
	defer rc.Close()
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	tr := tar.NewReader(rc)
	found := false
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		clean := path.Clean(strings.TrimPrefix(h.Name, "/"))
		if h.Typeflag != tar.TypeReg || !strings.HasPrefix(clean, imageDir+"/") {
			continue
		}
		found = true
		if err := writeAtomically(filepath.Join(tmp, filepath.FromSlash(clean)), tr); err != nil {
			return err
		}
	}
	if !found {
		return fmt.Errorf("the image has no /%s directory: is it a WMCO operator image?", imageDir)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

// secretKeychain turns a .dockerconfigjson into a keychain: the entry for the registry's host, else
// anonymous.
func secretKeychain(dockerConfig []byte) (authn.Keychain, error) {
	if len(dockerConfig) == 0 {
		return authn.NewMultiKeychain(), nil
	}
	var cfg struct {
		Auths map[string]authn.AuthConfig `json:"auths"`
	}
	if err := json.Unmarshal(dockerConfig, &cfg); err != nil {
		return nil, fmt.Errorf("the pull secret is not a .dockerconfigjson: %w", err)
	}
	return dockerKeychain(cfg.Auths), nil
}

type dockerKeychain map[string]authn.AuthConfig

func (k dockerKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	for _, key := range []string{r.RegistryStr(), r.String()} {
		if c, ok := k[key]; ok {
			return authn.FromConfig(c), nil
		}
	}
	return authn.Anonymous, nil
}
