package e2e

import (
	"encoding/json"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDomainKnowsNoTransportOrStorage enforces the layering: the domain
// packages import neither net/http nor bbolt, bindings never open the
// store, and no binding imports another.
func TestDomainKnowsNoTransportOrStorage(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is needed to list dependencies: %v", err)
	}
	for _, tc := range []struct {
		pkg       string
		forbidden []string
	}{
		{"github.com/kfa-project/kfa/agents", []string{"net/http", "go.etcd.io/bbolt"}},
		{"github.com/kfa-project/kfa/tasks", []string{"net/http", "go.etcd.io/bbolt"}},
		{"github.com/kfa-project/kfa/asknet", []string{"net/http", "go.etcd.io/bbolt", "github.com/jackc/pgx/v5"}},
		{"github.com/kfa-project/kfa/discussions", []string{"net/http", "go.etcd.io/bbolt"}},
		{"github.com/kfa-project/kfa/moderation", []string{"net/http", "go.etcd.io/bbolt", "github.com/jackc/pgx/v5"}},
		{"github.com/kfa-project/kfa/knowledge", []string{"net/http", "go.etcd.io/bbolt"}},
		{"github.com/kfa-project/kfa/sessions", []string{"net/http", "go.etcd.io/bbolt"}},
		{"github.com/kfa-project/kfa/service", []string{"net/http", "go.etcd.io/bbolt"}},
		{"github.com/kfa-project/kfa/a2a", []string{"net/http", "go.etcd.io/bbolt"}},
		{"github.com/kfa-project/kfa/push", []string{"net/http", "go.etcd.io/bbolt"}},
		{"github.com/kfa-project/kfa/signing", []string{"net/http", "go.etcd.io/bbolt"}},
		// The sender talks HTTP, but never to the store behind the outbox's interface.
		{"github.com/kfa-project/kfa/webhook", []string{"go.etcd.io/bbolt", "github.com/kfa-project/kfa/store"}},
		// No binding imports another: what they share is internal/httpkit.
		{"github.com/kfa-project/kfa/httpjson", []string{"go.etcd.io/bbolt", "github.com/kfa-project/kfa/store",
			"github.com/kfa-project/kfa/jsonrpc", "github.com/kfa-project/kfa/admin", "github.com/kfa-project/kfa/mcpserver"}},
		{"github.com/kfa-project/kfa/jsonrpc", []string{"go.etcd.io/bbolt", "github.com/kfa-project/kfa/store",
			"github.com/kfa-project/kfa/httpjson", "github.com/kfa-project/kfa/admin", "github.com/kfa-project/kfa/mcpserver"}},
		{"github.com/kfa-project/kfa/admin", []string{"go.etcd.io/bbolt", "github.com/kfa-project/kfa/store",
			"github.com/kfa-project/kfa/httpjson", "github.com/kfa-project/kfa/jsonrpc", "github.com/kfa-project/kfa/mcpserver"}},
		{"github.com/kfa-project/kfa/web", []string{"go.etcd.io/bbolt", "github.com/kfa-project/kfa/store",
			"github.com/kfa-project/kfa/httpjson", "github.com/kfa-project/kfa/jsonrpc", "github.com/kfa-project/kfa/admin",
			"github.com/kfa-project/kfa/mcpserver"}},
		{"github.com/kfa-project/kfa/mcpserver", []string{"go.etcd.io/bbolt", "github.com/kfa-project/kfa/store",
			"github.com/kfa-project/kfa/httpjson", "github.com/kfa-project/kfa/jsonrpc", "github.com/kfa-project/kfa/admin",
			"github.com/kfa-project/kfa/web", "github.com/kfa-project/kfa/server", "github.com/kfa-project/kfa/search"}},
	} {
		out, err := exec.Command(goTool, "list", "-deps", tc.pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", tc.pkg, err, out)
		}
		deps := map[string]bool{}
		for _, l := range strings.Split(string(out), "\n") {
			deps[strings.TrimSpace(l)] = true
		}
		for _, f := range tc.forbidden {
			if deps[f] {
				t.Errorf("%s depends on %s", tc.pkg, f)
			}
		}
	}
}

// storeRules are the rules of the domain packages: a store that calls one
// decides something itself instead of calling the command's decision,
// and the other store would have to decide it again, the same way (the
// reply-rate race on PostgreSQL came from one such copy). Add a rule here
// when its package gains one.
var storeRules = []string{
	"(*github.com/kfa-project/kfa/tasks.Task).Cancel",
	"(*github.com/kfa-project/kfa/tasks.Task).CompleteByReply",
	"(github.com/kfa-project/kfa/ratelimit.Rate).Take",
	"(github.com/kfa-project/kfa/ratelimit.Rate).Quota",
	"github.com/kfa-project/kfa/discussions.Qualifies",
	"github.com/kfa-project/kfa/discussions.DecidePost",
	"github.com/kfa-project/kfa/discussions.Notices",
	"(github.com/kfa-project/kfa/agents.Agent).Active",
	"(github.com/kfa-project/kfa/agents.Credential).ValidAt",
	"(github.com/kfa-project/kfa/a2a.TaskState).Terminal",
	"github.com/kfa-project/kfa/tasks.Announce",
	"github.com/kfa-project/kfa/push.Deliveries",
	"github.com/kfa-project/kfa/discussions.HideDiscussion",
	"github.com/kfa-project/kfa/discussions.ShowDiscussion",
	"github.com/kfa-project/kfa/discussions.HideReply",
	"github.com/kfa-project/kfa/discussions.ShowReply",
}

// storePackages are the packages that persist: they load, call a
// decision, and write what it returned.
var storePackages = []string{
	"github.com/kfa-project/kfa/store",
	"github.com/kfa-project/kfa/store/postgres",
}

// TestStoresHoldNoRules type-checks the store packages and fails on any
// call of a rule (storeRules) from them: the stores call decisions
// (asknet.DecideAsk, tasks.DecideCancel, ...), never the rules the
// decisions are made of.
func TestStoresHoldNoRules(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is needed to type-check the stores: %v", err)
	}
	exports := exportData(t, goTool, storePackages)
	rules := map[string]bool{}
	for _, r := range storeRules {
		rules[r] = true
	}
	for _, pkg := range storePackages {
		calls := ruleCalls(t, goTool, pkg, exports, rules)
		for _, c := range calls {
			t.Errorf("%s calls the rule %s: call the command's decision instead", c.pos, c.rule)
		}
	}
}

type ruleCall struct{ pos, rule string }

// exportData maps every package the store packages depend on to its
// compiled export data (go list -export builds what it must).
func exportData(t *testing.T, goTool string, pkgs []string) map[string]string {
	t.Helper()
	cmd := exec.Command(goTool, append([]string{"list", "-export", "-deps", "-json=ImportPath,Export"}, pkgs...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
	}
	return exports
}

// ruleCalls type-checks pkg's non-test files against the export data and
// returns its calls of rules.
func ruleCalls(t *testing.T, goTool, pkg string, exports map[string]string, rules map[string]bool) []ruleCall {
	t.Helper()
	out, err := exec.Command(goTool, "list", "-f", "{{.Dir}}\n{{range .GoFiles}}{{.}}\n{{end}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	lines := strings.Fields(string(out))
	dir, names := lines[0], lines[1:]
	fset := token.NewFileSet()
	var files []*ast.File
	for _, n := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	if _, err := conf.Check(pkg, fset, files, info); err != nil {
		t.Fatalf("type-check %s: %v", pkg, err)
	}
	var calls []ruleCall
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var obj types.Object
			switch fn := ast.Unparen(call.Fun).(type) {
			case *ast.Ident:
				obj = info.Uses[fn]
			case *ast.SelectorExpr:
				if sel, ok := info.Selections[fn]; ok {
					obj = sel.Obj()
				} else {
					obj = info.Uses[fn.Sel]
				}
			}
			if f, ok := obj.(*types.Func); ok && rules[f.FullName()] {
				calls = append(calls, ruleCall{pos: fset.Position(call.Pos()).String(), rule: f.FullName()})
			}
			return true
		})
	}
	return calls
}
