package actions_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requestKinds lists where the generic code of package actions (the Runner, the audit point, the ports)
// looks at a request's concrete type: a type switch, or a type assertion to a type of package request.
func requestKinds(t *testing.T, src map[string]string) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	for name, text := range src {
		f, err := parser.ParseFile(fset, name, text, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeSwitchStmt:
				out = append(out, fset.Position(n.Pos()).String()+": a type switch")
			case *ast.TypeAssertExpr:
				if sel, ok := n.Type.(*ast.SelectorExpr); ok {
					if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "request" {
						out = append(out, fset.Position(n.Pos()).String()+": an assertion to request."+sel.Sel.Name)
					}
				}
			}
			return true
		})
	}
	return out
}

// TestTheRunnerKnowsNoRequestType: the Runner hands every request to the handler registered for its type
// and decides auditing from the request's own Audit; nothing in package actions switches on a request's
// type (a new action registers itself and changes nothing here).
func TestTheRunnerKnowsNoRequestType(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	src := map[string]string{}
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			src[f] = string(b)
		}
	}
	require.Contains(t, src, "runner.go")
	assert.Empty(t, requestKinds(t, src), "look the handler up by type (actions.Register); let the request say how it is audited (Audit)")

	// The search finds what it looks for, so the check above cannot pass vacuously.
	bad := map[string]string{"bad.go": `package actions
func run(req request.Request) {
	switch req.(type) {
	}
	_ = req.(request.Reboot)
}`}
	assert.Len(t, requestKinds(t, bad), 2)
}
