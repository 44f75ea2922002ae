package all_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wmcon/wmcon/actions"
	_ "github.com/wmcon/wmcon/actions/all"
)

// requestTypes are the types package request declares with an Action method: every request a console
// key or a command can send.
func requestTypes(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, "../request", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	require.NoError(t, err)
	var out []string
	for _, f := range pkgs["request"].Files {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil && fn.Name.Name == "Action" {
				recv := fn.Recv.List[0].Type
				if s, ok := recv.(*ast.StarExpr); ok {
					recv = s.X
				}
				out = append(out, "request."+recv.(*ast.Ident).Name)
			}
		}
	}
	return out
}

// TestEveryRequestHasAHandler: with package all imported, as the session does, every request type has its
// handler registered, so no request the console or a command sends ends with "no action is registered".
func TestEveryRequestHasAHandler(t *testing.T) {
	want := requestTypes(t)
	require.Contains(t, want, "request.Cordon", "the search finds the request types")
	var got []string
	for _, rt := range actions.Registered() {
		if rt.PkgPath() == "github.com/wmcon/wmcon/actions/request" {
			got = append(got, rt.String())
		}
	}
	assert.ElementsMatch(t, want, got)
}
