package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeMaxLines keeps the README a user's guide: what wmcon is, the two commands, a tour and the reference.
// What does not fit goes to docs/ (issue 23).
const readmeMaxLines = 400

// documentedTopics are the sections the README had before the docs moved to docs/ (issue 23): each must
// still be a heading in the README or in docs/, so moving text around never drops a topic.
var documentedTopics = []string{
	"Two commands", "The demo clusters", "Pointing it at a real cluster", "The console", "Graceful reboot",
	"Triage: why is this Windows node unhappy?", "Logs", "Registry mirrors and the cluster proxy", "Metrics",
	"Upgrades", "Headless commands", "Exit codes", "Interrupting wmcon (Ctrl-C, SIGTERM)", "Audit log", "Read-only",
	"Security: what wmcon checks before approving a CSR",
	"Cluster setup: the operator, the SSH key, MachineSets, BYOH hosts", "Configure a Windows host",
	"How wmcon configures a node, and where it differs from WMCO", "Guided setup", "In the console",
	"Headless: `wmcon setup`", "Architecture", "Tests", "Benchmarks (`make bench`)", "Scale", "Stack",
	"Adding a view",
}

// documents are the Markdown files a reader of the repository starts from, and what they link to.
func documents(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	require.NotEmpty(t, docs, "docs/ holds the architecture, testing, benchmarks and decisions")
	return append([]string{"README.md", "CONTRIBUTING.md"}, docs...)
}

func TestREADMEStaysAGuide(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	lines := strings.Count(string(b), "\n")
	assert.Less(t, lines, readmeMaxLines, "README.md has %d lines: move architecture, tests, benchmarks and "+
		"long explanations to docs/ and link them", lines)
}

func TestEveryTopicIsStillDocumented(t *testing.T) {
	headings := map[string]bool{}
	for _, doc := range documents(t) {
		for _, h := range markdownHeadings(t, doc) {
			headings[h] = true
		}
	}
	for _, topic := range documentedTopics {
		assert.True(t, headings[topic], "no heading %q in README.md or docs/: a topic was dropped", topic)
	}
}

// TestDocLinksResolve: every relative link of the README, CONTRIBUTING.md and docs/ names a file of the
// repository (never one beside it), and a #fragment names a heading of that file.
func TestDocLinksResolve(t *testing.T) {
	for _, doc := range documents(t) {
		for _, link := range markdownLinks(t, doc) {
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			path, fragment, _ := strings.Cut(link, "#")
			target := doc
			if path != "" {
				target = filepath.Clean(filepath.Join(filepath.Dir(doc), path))
			}
			if strings.HasPrefix(target, "..") {
				t.Errorf("%s links to %s, outside the repository", doc, link)
				continue
			}
			info, err := os.Stat(target)
			if !assert.NoError(t, err, "%s links to %s", doc, link) || fragment == "" || info.IsDir() {
				continue
			}
			anchors := map[string]bool{}
			for _, h := range markdownHeadings(t, target) {
				anchors[anchor(h)] = true
			}
			assert.True(t, anchors[fragment], "%s links to %s: %s has no heading with that anchor", doc, link, target)
		}
	}
}

func TestAnchorsAreGitHubs(t *testing.T) {
	for heading, want := range map[string]string{
		"Cluster setup: the operator, the SSH key, MachineSets, BYOH hosts": "cluster-setup-the-operator-the-ssh-key-machinesets-byoh-hosts",
		"Headless: `wmcon setup`":                   "headless-wmcon-setup",
		"Interrupting wmcon (Ctrl-C, SIGTERM)":      "interrupting-wmcon-ctrl-c-sigterm",
		"The request → Runner → handler flow":       "the-request--runner--handler-flow",
		"Triage: why is this Windows node unhappy?": "triage-why-is-this-windows-node-unhappy",
	} {
		assert.Equal(t, want, anchor(heading), heading)
	}
}

var (
	headingLine = regexp.MustCompile(`^#{1,6} (.+)$`)
	linkTarget  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

// markdownHeadings are the headings of a Markdown file, outside code blocks.
func markdownHeadings(t *testing.T, path string) []string {
	var out []string
	for _, line := range proseLines(t, path) {
		if m := headingLine.FindStringSubmatch(line); m != nil {
			out = append(out, strings.TrimSpace(m[1]))
		}
	}
	return out
}

// markdownLinks are the targets of a Markdown file's links, outside code blocks.
func markdownLinks(t *testing.T, path string) []string {
	var out []string
	for _, line := range proseLines(t, path) {
		for _, m := range linkTarget.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

func proseLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []string
	code := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			code = !code
			continue
		}
		if !code {
			out = append(out, line)
		}
	}
	return out
}

// anchor is the fragment GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
