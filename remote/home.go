package remote

import (
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// HomeDir is the user's home directory as an absolute path: $HOME, else the account's entry (cron and
// systemd units often run without HOME). It never falls back to a relative path, which would make what
// wmcon reads and writes depend on the working directory.
func HomeDir() (string, error) {
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) {
		return h, nil
	}
	if u, err := user.Current(); err == nil && filepath.IsAbs(u.HomeDir) {
		return u.HomeDir, nil
	}
	return "", errors.New("no home directory: HOME is not set (or not absolute) and the account has none")
}

// DefaultKnownHostsPath is where pins go when the cluster cannot keep them: $XDG_CONFIG_HOME/wmcon/known_hosts
// (when absolute), else ~/.config/wmcon/known_hosts. Without either it is an error, never a relative path.
func DefaultKnownHostsPath() (string, error) {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "wmcon", "known_hosts"), nil
	}
	home, err := HomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".config", "wmcon", "known_hosts"), nil
}

// ExpandHome expands a leading ~ to HomeDir; without a home directory the path is returned unchanged.
func ExpandHome(p string) string { return expandHome(p) }

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := HomeDir(); err == nil {
			return filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	return p
}
