package payload

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// WriteSynthetic lays out a small stand-in payload in dir, shaped like WMCO's (subdirectories and a
// sha256sum), for the demo and tests: each file holds a short PE-looking text naming what it stands for.
// Real hosts need a real payload; the simulated hosts accept these.
func WriteSynthetic(dir string, names []string) error { return WriteSyntheticBuild(dir, names, "") }

// WriteSyntheticBuild is WriteSynthetic for one build of the payload: every file names the build, so two
// builds differ in every file (and in Version), as two releases of the operator's payload do.
func WriteSyntheticBuild(dir string, names []string, build string) error {
	sort.Strings(names)
	var sums strings.Builder
	for _, n := range names {
		data := []byte("MZ wmcon synthetic stand-in for " + n + "\n")
		if build != "" {
			data = []byte("MZ wmcon synthetic stand-in for " + n + ", build " + build + "\n")
		}
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&sums, "%s  /payload/%s\n", hex.EncodeToString(sum[:]), n)
	}
	return os.WriteFile(filepath.Join(dir, SumsFile), []byte(sums.String()), 0o644)
}
