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
	"slices"
	"strings"
	"testing"
)

// mod is the module path every kfa package starts with.
const mod = "github.com/kfa-project/kfa/"

// The parts of kfa, as docs/architecture.md draws them: imports run
// downward, from main (cmd, server) through the surfaces and the service
// to the domain, and the stores implement the domain's interfaces.
var (
	// surfaces translate a wire to the service and back.
	surfaces = []string{"httpjson", "jsonrpc", "grpcbinding", "apiv1", "discovery", "mcpserver", "web", "admin"}
	// stores persist: bbolt, PostgreSQL, and what only they use.
	stores = []string{"store", "store/postgres", "store/transfer", "store/storetest", "store/internal/storedoc"}
	// domain holds the rules as pure decisions, and the store interfaces.
	domain = []string{"agents", "tasks", "discussions", "knowledge", "push", "sessions", "signing", "ratelimit",
		"input", "pagetoken", "asknet", "changelog", "moderation", "peers"}
	// followers read the change log through the domain's interfaces.
	followers = []string{"search", "webhook", "events", "metrics"}
	// mains wire the parts together.
	mains = []string{"server", "cmd/kfa", "cmd/kfa-bench"}
	// seam is the storage seam: kinds of record, load and write plans, and
	// the Engine a store is to the commands; commands are every command
	// written once over it. Both sit between the domain and the stores.
	seam = []string{"storage", "commands"}
	// drivers are the database drivers, the stores' own.
	drivers = []string{"go.etcd.io/bbolt", "github.com/jackc/pgx/v5"}
)

// pkgs are the packages of a part, by import path.
func pkgs(part ...[]string) []string {
	var out []string
	for _, p := range part {
		for _, name := range p {
			if strings.Contains(name, ".") || name == "net/http" {
				out = append(out, name)
			} else {
				out = append(out, mod+name)
			}
		}
	}
	return out
}

// but is list without the package pkg.
func but(list []string, pkg string) []string {
	var out []string
	for _, p := range list {
		if p != pkg {
			out = append(out, p)
		}
	}
	return out
}

// TestImportsRunDownward enforces the layering with go list -deps: the
// domain knows no transport, store or surface; the service knows no
// store; no surface imports another surface or a store; the HTTP
// plumbing sits below the service; the client needs the wire shapes, not
// the server; followers read through interfaces, on any store.
func TestImportsRunDownward(t *testing.T) {
	type rule struct {
		pkg       string
		forbidden []string
		why       string
	}
	var rules []rule
	for _, d := range pkgs(domain) {
		rules = append(rules, rule{d, pkgs([]string{"net/http"}, drivers, stores, seam, surfaces, followers, mains,
			[]string{"service", "internal/httpkit", "api", "client"}), "the domain knows no transport, store or surface"})
	}
	rules = append(rules, rule{mod + "service", pkgs([]string{"net/http"}, drivers, stores, seam, surfaces, mains,
		[]string{"internal/httpkit", "search", "webhook", "metrics", "client"}),
		"the service does not know which store, transport or index runs"})
	for _, s := range pkgs(surfaces) {
		// The stream broker (events) comes with the service, which hands
		// its streams out as service.Stream.
		rules = append(rules, rule{s, append(pkgs(drivers, stores, seam, mains, []string{"client", "search", "webhook", "metrics"}),
			but(pkgs(surfaces), s)...),
			"a surface calls the service: never another surface, a store, the index, the sender, the metrics or the server"})
	}
	rules = append(rules,
		rule{mod + "internal/httpkit", pkgs(drivers, stores, surfaces, mains, []string{"service"}),
			"the HTTP plumbing sits below the service"},
		rule{mod + "client", pkgs(drivers, stores, surfaces, followers, mains, []string{"service", "internal/httpkit"}),
			"a client needs the wire shapes, not the server"},
		rule{mod + "api", pkgs(drivers, stores, surfaces, followers, mains, []string{"service", "internal/httpkit", "client"}),
			"the wire shapes know nothing of the server"},
		rule{mod + "markdown", pkgs([]string{"net/http"}, drivers, stores, surfaces, followers, mains, domain,
			[]string{"service", "internal/httpkit", "api", "client", "a2a"}),
			"the Markdown renderer is a leaf the web view and the index share: it knows nothing of kfa"},
	)
	rules = append(rules,
		rule{mod + "storage", but(pkgs([]string{"net/http"}, drivers, stores, surfaces, followers, mains, domain,
			[]string{"commands", "service", "internal/httpkit", "api", "client", "a2a"}), mod+"changelog"),
			"the seam knows kinds, keys and plans: no rule, no store, no driver"},
		rule{mod + "commands", pkgs([]string{"net/http"}, drivers, stores, surfaces, followers, mains,
			[]string{"service", "internal/httpkit", "api", "client"}),
			"the commands are written once over the seam: no store, no driver, no transport"})
	// The certificates are plumbing of the public listener: they know
	// nothing of kfa, and reach the store through the Cache the server
	// hands them.
	rules = append(rules, rule{mod + "certs", pkgs(drivers, stores, seam, surfaces, followers, mains, domain,
		[]string{"service", "internal/httpkit", "client", "api"}), "the certificates know nothing of kfa"})
	for _, f := range pkgs(followers) {
		forbidden := pkgs(drivers, stores, seam, surfaces, mains)
		if f == mod+"search" {
			// bleve keeps its own files with bbolt: search may depend on
			// the driver, never on kfa's stores.
			forbidden = but(forbidden, "go.etcd.io/bbolt")
		}
		rules = append(rules, rule{f, forbidden, "followers read the log through interfaces, on any store"})
	}
	goTool := goTool(t)
	for _, r := range rules {
		deps := listDeps(t, goTool, r.pkg)
		for _, f := range r.forbidden {
			if deps[f] {
				t.Errorf("%s depends on %s: %s", r.pkg, f, r.why)
			}
		}
	}
}

// pgxAllowed are the packages that may import pgx themselves: the
// PostgreSQL store, and what makes throwaway databases (the tests'
// internal/pgtest, the failover clusters of internal/pgha, and the
// benchmark's own for its runs).
var pgxAllowed = pkgs([]string{"store/postgres", "internal/pgtest", "internal/pgha", "cmd/kfa-bench"})

// TestPgxOnlyInThePostgresStore: no package but the PostgreSQL store (and
// the makers of throwaway databases) imports pgx; every other reaches
// PostgreSQL through it. Tests may.
func TestPgxOnlyInThePostgresStore(t *testing.T) {
	out, err := exec.Command(goTool(t), "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", mod+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || slices.Contains(pgxAllowed, f[0]) {
			continue
		}
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, "github.com/jackc/pgx") {
				t.Errorf("%s imports %s: only the PostgreSQL store talks to PostgreSQL", f[0], imp)
			}
		}
	}
}

// domainHandles are the domain's services and the stores: a surface that
// held one would reach the domain around the service.
var domainHandles = []string{
	mod + "agents.Service", mod + "tasks.Service", mod + "discussions.Service", mod + "knowledge.Service",
	mod + "sessions.Service", mod + "push.Service", mod + "signing.Signer", mod + "moderation.Service",
	mod + "store.DB", mod + "store/postgres.DB",
}

// TestSurfacesHoldNoDomainService type-checks the surfaces and fails on
// any value, field or parameter whose type names a domain service or a
// store: the surfaces reach agents, tasks, discussions, records and
// sessions through package service, as the A2A bindings do.
func TestSurfacesHoldNoDomainService(t *testing.T) {
	goTool := goTool(t)
	list := pkgs(surfaces)
	exports := exportData(t, goTool, list)
	for _, pkg := range list {
		fset, _, info := typeCheck(t, goTool, pkg, exports)
		seen := map[string]bool{}
		check := func(pos token.Pos, typ types.Type) {
			if typ == nil {
				return
			}
			s := types.TypeString(typ, nil)
			for _, h := range domainHandles {
				if strings.Contains(s, h) {
					at := fset.Position(pos)
					key := at.Filename + h
					if !seen[key] {
						seen[key] = true
						t.Errorf("%s: %s holds a %s: call package service instead", at, pkg, h)
					}
				}
			}
		}
		for id, obj := range info.Defs {
			if obj != nil {
				check(id.Pos(), obj.Type())
			}
		}
		for expr, tv := range info.Types {
			check(expr.Pos(), tv.Type)
		}
	}
}

// goTool finds the go command.
func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is needed to list dependencies: %v", err)
	}
	return p
}

// listDeps is every package pkg depends on, itself included.
func listDeps(t *testing.T, goTool, pkg string) map[string]bool {
	t.Helper()
	out, err := exec.Command(goTool, "list", "-deps", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	deps := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		deps[strings.TrimSpace(l)] = true
	}
	return deps
}

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

// typeCheck type-checks pkg's non-test files against the export data.
func typeCheck(t *testing.T, goTool, pkg string, exports map[string]string) (*token.FileSet, []*ast.File, *types.Info) {
	t.Helper()
	out, err := exec.Command(goTool, "list", "-f", "{{.Dir}}\n{{range .GoFiles}}{{.}}\n{{end}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	lines := strings.Fields(string(out))
	return typeCheckFiles(t, lines[0], lines[1:], pkg, exports)
}

// typeCheckDir type-checks the Go files of dir as package pkg.
func typeCheckDir(t *testing.T, dir, pkg string, exports map[string]string) (*token.FileSet, []*ast.File, *types.Info) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no Go files in %s (%v)", dir, err)
	}
	for i := range names {
		names[i] = filepath.Base(names[i])
	}
	return typeCheckFiles(t, dir, names, pkg, exports)
}

// typeCheckFiles type-checks the files names of dir as package pkg
// against the export data.
func typeCheckFiles(t *testing.T, dir string, names []string, pkg string, exports map[string]string) (*token.FileSet, []*ast.File, *types.Info) {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	for _, n := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{},
		Types: map[ast.Expr]types.TypeAndValue{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	if _, err := conf.Check(pkg, fset, files, info); err != nil {
		t.Fatalf("type-check %s: %v", pkg, err)
	}
	return fset, files, info
}
