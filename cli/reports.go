package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wmcon/wmcon/cluster"
	"github.com/wmcon/wmcon/config"
	"github.com/wmcon/wmcon/remote/sshkey"
)

// The commands that print one report (version, key show, operator status, byoh list) print it as text or,
// with -o json, as one JSON object (or array) whose shape README "Output" documents: a script reads a
// document, not a stream of events.

// addReportFormat binds -o/--output for a command that prints one report.
func addReportFormat(fs *pflag.FlagSet, format *string) {
	fs.StringVarP(format, "output", "o", "text", "text, or json for one JSON document")
}

// checkReportFormat refuses a format a report cannot be printed in.
func checkReportFormat(format string) error {
	if format != "text" && format != "json" {
		return usageErrorf("--output %q: use text or json", format)
	}
	return nil
}

// writeJSON prints v as indented JSON and a newline.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

// versionInfo is wmcon version -o json.
type versionInfo struct {
	Version   string `json:"version"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

func currentVersion() versionInfo {
	return versionInfo{Version: Version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
}

// keyReport is wmcon key show -o json: the two secrets, described, never their keys.
type keyReport struct {
	CloudPrivateKey keySecret `json:"cloudPrivateKey"`
	UserData        keySecret `json:"userData"`
}

// keySecret is one secret holding (or authorizing) a key: where it is, whether it is there, and the key's
// type, size and fingerprint.
type keySecret struct {
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	Present     bool   `json:"present"`
	Type        string `json:"type,omitempty"`
	Bits        int    `json:"bits,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	Problem     string `json:"problem,omitempty"`
	// MatchesCloudPrivateKey is set on userData: whether it authorizes the key in cloud-private-key.
	MatchesCloudPrivateKey *bool `json:"matchesCloudPrivateKey,omitempty"`
}

func newKeyReport(st cluster.KeyState) keyReport {
	describe := func(ns, name string, k *sshkey.Info, problem string) keySecret {
		s := keySecret{Namespace: ns, Name: name, Present: k != nil || problem != "", Problem: problem}
		if k != nil {
			s.Type, s.Bits, s.Fingerprint = k.Type, k.Bits, k.Fingerprint
		}
		return s
	}
	r := keyReport{CloudPrivateKey: describe(config.OperatorNamespace, config.PrivateKeySecret, st.Key, st.KeyProblem),
		UserData: describe(config.MachineAPINamespace, config.UserDataSecret, st.UserDataKey, st.UserDataErr)}
	if st.UserDataKey != nil && st.UserDataErr == "" {
		match := st.Key != nil && st.Key.Fingerprint == st.UserDataKey.Fingerprint
		r.UserData.MatchesCloudPrivateKey = &match
	}
	return r
}

// printedForm settles the form machineset generate prints its MachineSet in: --format, or -o json/-o yaml
// as kubectl users write it (which must agree with --format when both are given). With --apply, -o is the
// events' format and --format is not used.
func printedForm(cmd *cobra.Command, format *string, output string, apply bool) error {
	if *format != "yaml" && *format != "json" {
		return usageErrorf("--format %q: use yaml or json", *format)
	}
	if apply || output == "text" {
		return nil
	}
	if output != "yaml" && output != "json" {
		return usageErrorf("--output %q: use yaml or json for the printed MachineSet", output)
	}
	if cmd.Flags().Changed("format") && *format != output {
		return usageErrorf("--format %s and --output %s disagree: give one of them", *format, output)
	}
	*format = output
	return nil
}
