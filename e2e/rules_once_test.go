package e2e

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// parseTree parses every non-test Go file of the module under root
// (testdata and hidden directories left out) and calls visit with each.
func parseTree(t *testing.T, root string, visit func(path string, f *ast.File, fset *token.FileSet)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, src, 0)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		visit(filepath.ToSlash(rel), f, fset)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// hasIntLiteral reports whether e holds an integer literal.
func hasIntLiteral(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if l, ok := n.(*ast.BasicLit); ok && l.Kind == token.INT {
			found = true
		}
		return !found
	})
	return found
}

// selName is the name of a selector (x.Name) or an identifier.
func selName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// TestBodyLimitWrittenOnce: the default bound on request bodies is one
// constant, httpkit.DefaultMaxBodyBytes; the server's config and every
// surface that defaults a MaxBodyBytes take it from there, so no number
// is written beside a MaxBodyBytes anywhere else.
func TestBodyLimitWrittenOnce(t *testing.T) {
	parseTree(t, "..", func(path string, f *ast.File, fset *token.FileSet) {
		if strings.HasPrefix(path, "internal/httpkit/") {
			return
		}
		check := func(name string, value ast.Expr) {
			if name == "MaxBodyBytes" && hasIntLiteral(value) {
				t.Errorf("%s: MaxBodyBytes set from a number; use httpkit.DefaultMaxBodyBytes (or httpkit.BodyLimit)", fset.Position(value.Pos()))
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.KeyValueExpr:
				check(selName(n.Key), n.Value)
			case *ast.AssignStmt:
				for i, lhs := range n.Lhs {
					if i < len(n.Rhs) {
						check(selName(lhs), n.Rhs[i])
					}
				}
			}
			return true
		})
	})
}

// TestSurfacesCompareNoAuthors: whether a reply answers its question (its
// author is not the asker) is discussions.Qualifies; a surface that
// compares authors itself holds a copy of that rule.
func TestSurfacesCompareNoAuthors(t *testing.T) {
	for _, s := range surfaces {
		parseTree(t, filepath.Join("..", s), func(path string, f *ast.File, fset *token.FileSet) {
			ast.Inspect(f, func(n ast.Node) bool {
				b, ok := n.(*ast.BinaryExpr)
				if ok && (b.Op == token.EQL || b.Op == token.NEQ) && (selName(b.X) == "AuthorID" || selName(b.Y) == "AuthorID") {
					t.Errorf("%s: compares an AuthorID; call discussions.Qualifies", fset.Position(b.Pos()))
				}
				return true
			})
		})
	}
}
