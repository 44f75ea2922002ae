package remote

import (
	"context"
	"fmt"
	"strings"

	"github.com/wmcon/wmcon/model"
)

// The batched forms of the file, service and environment commands: many paths or services in one round
// trip, for the node configuration engine, which reads a whole host's state and applies a whole plan.

// FileHashes returns the SHA-256 (upper-case hex) of every existing file among paths, keyed by the path
// as given; missing files and directories are absent. One round trip.
func (c *Client) FileHashes(ctx context.Context, paths []string) (map[string]string, error) {
	out := map[string]string{}
	if len(paths) == 0 {
		return out, nil
	}
	cmd := cmdFileHashes(paths)
	res, err := c.Run(ctx, cmd)
	if err != nil {
		return nil, err
	}
	// Missing files make the statement fail silently (exit 1, no error text); error text is a real failure.
	if res.Exit != 0 && strings.TrimSpace(res.Stderr) != "" {
		return nil, &CommandError{Host: c.Name(), Command: cmd, Exit: res.Exit, Stderr: res.Stderr}
	}
	byLower := map[string]string{}
	for _, p := range paths {
		byLower[strings.ToLower(p)] = p
	}
	for _, l := range lines(res.Stdout) {
		i := strings.LastIndex(l, "=")
		if i < 0 {
			continue
		}
		if p, ok := byLower[strings.ToLower(strings.TrimSpace(l[:i]))]; ok {
			out[p] = strings.TrimSpace(l[i+1:])
		}
	}
	return out, nil
}

// PathsExist runs one Test-Path over every path; the answer is keyed by the path as given.
func (c *Client) PathsExist(ctx context.Context, paths []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(paths) == 0 {
		return out, nil
	}
	stdout, err := c.RunOK(ctx, cmdTestPaths(paths))
	if err != nil {
		return nil, err
	}
	answers := lines(stdout)
	if len(answers) != len(paths) {
		return nil, fmt.Errorf("%s: Test-Path answered %d lines for %d paths", c.Name(), len(answers), len(paths))
	}
	for i, p := range paths {
		out[p] = strings.TrimSpace(answers[i]) == "True"
	}
	return out, nil
}

// MakeDirs creates directories (and their parents) in one round trip; existing ones are fine.
func (c *Client) MakeDirs(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	cmds := make([]string, len(paths))
	for i, p := range paths {
		cmds[i] = cmdMakeDir(p)
	}
	_, err := c.RunOK(ctx, joinCommands(cmds))
	return err
}

// RemovePaths deletes files and directories (recursively) in one round trip, skipping those that do not
// exist: it first asks which exist, so two round trips at most.
func (c *Client) RemovePaths(ctx context.Context, paths []string) error {
	exist, err := c.PathsExist(ctx, paths)
	if err != nil {
		return err
	}
	var cmds []string
	for _, p := range paths {
		if exist[p] {
			cmds = append(cmds, cmdRemoveItem(p, true))
		}
	}
	if len(cmds) == 0 {
		return nil
	}
	_, err = c.RunOK(ctx, joinCommands(cmds))
	return err
}

// SetEnvs sets machine environment variables in one round trip; an empty value removes the variable.
func (c *Client) SetEnvs(ctx context.Context, vars map[string]string) error {
	var cmds, masked []string
	for name, v := range vars {
		if v == "" {
			cmds, masked = append(cmds, cmdRemoveEnv(name)), append(masked, cmdRemoveEnv(name))
			continue
		}
		if err := checkEnvValue(name, v); err != nil {
			return err
		}
		cmds, masked = append(cmds, cmdSetEnv(name, v)), append(masked, cmdSetEnv(name, model.RedactURL(v)))
	}
	if len(cmds) == 0 {
		return nil
	}
	_, err := c.RunOK(ctx, joinCommands(cmds))
	return maskEnvCommand(err, joinCommands(masked))
}

// GetEnvs reads machine environment variables in one round trip ("" = unset).
func (c *Client) GetEnvs(ctx context.Context, names []string) (map[string]string, error) {
	out := map[string]string{}
	if len(names) == 0 {
		return out, nil
	}
	// Each value is printed after a marker, so unset (empty) values keep their place.
	cmds := make([]string, 0, 2*len(names))
	for _, n := range names {
		cmds = append(cmds, "'"+envMarker+"'", cmdGetEnv(n))
	}
	stdout, err := c.RunOK(ctx, joinCommands(cmds))
	if err != nil {
		return nil, err
	}
	i := -1
	for _, l := range lines(stdout) {
		if l == envMarker {
			i++
			continue
		}
		if i >= 0 && i < len(names) {
			out[names[i]] += l
		}
	}
	return out, nil
}

const envMarker = "--wmcon-env--"

// ServiceConfigs reads the configuration of several services with one line of sc.exe qc commands;
// missing services are absent from the map.
func (c *Client) ServiceConfigs(ctx context.Context, names ...string) (map[string]ServiceConfig, error) {
	out := map[string]ServiceConfig{}
	if len(names) == 0 {
		return out, nil
	}
	cmds := make([]string, len(names))
	for i, n := range names {
		if err := ValidateServiceName(n); err != nil {
			return nil, err
		}
		cmds[i] = cmdSCQueryConfig(n)
	}
	res, err := c.Run(ctx, joinCommands(cmds))
	if err != nil {
		return nil, err
	}
	blocks := splitSCBlocks(res.Stdout)
	if len(blocks) != len(names) {
		return nil, &CommandError{Host: c.Name(), Command: joinCommands(cmds), Exit: res.Exit,
			Stderr: fmt.Sprintf("unexpected sc.exe qc output (%d answers for %d services): %s %s", len(blocks), len(names), res.Stdout, res.Stderr)}
	}
	for i, b := range blocks {
		r := parseSC(b)
		if len(r) > 0 && r[0].failed {
			if r[0].code == 1060 {
				continue
			}
			return nil, c.scErr(names[i], r[0])
		}
		out[names[i]] = parseQC(names[i], b)
	}
	return out, nil
}

// splitSCBlocks cuts joined sc.exe output at each "[SC]" line: one block per command.
func splitSCBlocks(out string) []string {
	var blocks []string
	var cur []string
	for _, l := range lines(out) {
		if strings.HasPrefix(l, "[SC]") && cur != nil {
			blocks = append(blocks, strings.Join(cur, "\n"))
			cur = nil
		}
		if strings.HasPrefix(l, "[SC]") || cur != nil {
			cur = append(cur, l)
		}
	}
	if cur != nil {
		blocks = append(blocks, strings.Join(cur, "\n"))
	}
	return blocks
}

// UploadLeftoverPattern matches the temporary files Upload writes before renaming them into place; one
// left behind means a transfer was cut.
const UploadLeftoverPattern = "*.wmcon-*.tmp"

// UploadLeftovers lists the full paths of temporary upload files an interrupted transfer left in dirs
// (missing directories are skipped). One round trip.
func (c *Client) UploadLeftovers(ctx context.Context, dirs []string) ([]string, error) {
	if len(dirs) == 0 {
		return nil, nil
	}
	cmd := "Get-ChildItem -LiteralPath " + quotedList(dirs) + " -Filter " + Quote(UploadLeftoverPattern) +
		" -ErrorAction SilentlyContinue | ForEach-Object { $_.FullName }"
	res, err := c.Run(ctx, cmd)
	if err != nil {
		return nil, err
	}
	// A missing directory makes the statement fail silently (exit 1, no error text); error text is a real failure.
	if res.Exit != 0 && strings.TrimSpace(res.Stderr) != "" {
		return nil, &CommandError{Host: c.Name(), Command: cmd, Exit: res.Exit, Stderr: res.Stderr}
	}
	var out []string
	for _, l := range lines(res.Stdout) {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out, nil
}
