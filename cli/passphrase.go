package cli

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/wmcon/wmcon/localfile"
	"github.com/wmcon/wmcon/remote"
	"github.com/wmcon/wmcon/remote/sshkey"
)

// passphrasePrompt asks for the passphrases of encrypted key files before the console takes over the
// terminal (the SSH pool asks lazily, from an action's goroutine, when the screen belongs to Bubble Tea).
// Headless commands do not prompt: they read the environment variable, so scripts never hang.
type passphrasePrompt struct {
	envName      string
	out          io.Writer
	readPassword func() ([]byte, error) // nil: not a terminal, nothing is asked
	given        map[string][]byte      // key file → passphrase
}

func newTerminalPrompt(envName string, out io.Writer) *passphrasePrompt {
	p := &passphrasePrompt{envName: envName, out: out, given: map[string][]byte{}}
	if fd := int(os.Stdin.Fd()); term.IsTerminal(fd) {
		p.readPassword = func() ([]byte, error) { return term.ReadPassword(fd) }
	}
	return p
}

// askFor prompts once for each encrypted key file whose passphrase is not in the environment.
func (p *passphrasePrompt) askFor(keyFiles []string) error {
	if _, inEnv := os.LookupEnv(p.envName); inEnv || p.readPassword == nil {
		return nil
	}
	for _, path := range keyFiles {
		pemBytes, err := localfile.Read(expandHome(path), localfile.MaxKey)
		if err != nil {
			return fmt.Errorf("read --ssh-key %s: %w", path, err)
		}
		if !sshkey.IsEncrypted(pemBytes) {
			continue
		}
		fmt.Fprintf(p.out, "Passphrase for %s: ", path)
		pass, err := p.readPassword()
		fmt.Fprintln(p.out)
		if err != nil {
			return fmt.Errorf("read the passphrase of %s: %w", path, err)
		}
		if _, err := sshkey.Parse(pemBytes, pass); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		p.given[expandHome(path)] = pass // the pool names keys by their expanded path
	}
	return nil
}

// Passphrase is the pool's PassphraseFunc: what was typed at the prompt, else the environment variable.
func (p *passphrasePrompt) Passphrase(keyName string) ([]byte, error) {
	if pass, ok := p.given[keyName]; ok {
		return pass, nil
	}
	return remote.PassphraseFromEnv(p.envName)(keyName)
}

func expandHome(path string) string { return remote.ExpandHome(path) }
