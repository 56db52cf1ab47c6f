package e2e

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Rules live once, in the domain packages, as decisions; a store loads,
// locks and writes what a decision returned (docs/architecture.md). A
// rule written again in a store is caught by its class, not by its name:
//
//   - a store constructs no domain refusal: it names no error value or
//     error type of a domain package (a refusal is its decision's to
//     make), but the answers of a read that finds nothing (storeAnswers);
//   - a store branches on no domain state: no comparison, and no case of
//     a switch, holds a constant of a domain package or a task state
//     (which records an index holds is the schema's, package commands,
//     and a store asks it);
//   - a store calls no rule a decision is made of (storeRules).

// storeAnswers are the domain errors a store's read gives when it finds
// nothing: the one kind of domain error a store may name.
var storeAnswers = []string{
	"tasks.ErrNotFound", "discussions.ErrNotFound", "discussions.ReplyNotFoundError", "agents.ErrNotFound",
	"agents.ErrInvalidToken", "agents.ErrNotLinked", "push.ErrNotFound", "push.ErrDeliveryNotFound",
	"push.ErrTaskNotFound", "sessions.ErrNotFound", "knowledge.ErrNotFound",
}

// stateTypes are the domain states that live outside the domain packages
// (A2A's task states are wire types, their meaning kfa's rules).
var stateTypes = []string{mod + "a2a.TaskState"}

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
	"github.com/kfa-project/kfa/agents.MayAct",
	"(github.com/kfa-project/kfa/agents.Credential).ValidAt",
	"github.com/kfa-project/kfa/agents.ValidateIdentity",
	"github.com/kfa-project/kfa/agents.ProvisionNames",
	"github.com/kfa-project/kfa/agents.DecideResolve",
	"(github.com/kfa-project/kfa/agents.Agent).Permit",
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
	"github.com/kfa-project/kfa/store/internal/storedoc",
	"github.com/kfa-project/kfa/store/transfer",
}

// TestStoresHoldNoRules type-checks the store packages and fails on each
// rule written in them, by class (see above).
func TestStoresHoldNoRules(t *testing.T) {
	goTool := goTool(t)
	exports := exportData(t, goTool, storePackages)
	for _, pkg := range storePackages {
		fset, files, info := typeCheck(t, goTool, pkg, exports)
		for _, v := range ruleViolations(fset, files, info) {
			t.Errorf("%s", v)
		}
	}
}

// TestStoreRulesAreCaught: every rule planted in testdata/plantedrules
// (a refusal, a branch and a case on a domain state, inline as the stores
// once held them) is caught, and a read's not-found answer is not.
func TestStoreRulesAreCaught(t *testing.T) {
	goTool := goTool(t)
	exports := exportData(t, goTool, pkgs(domain, []string{"a2a"}))
	fset, files, info := typeCheckDir(t, filepath.Join("testdata", "plantedrules"), "plantedrules", exports)
	got := ruleViolations(fset, files, info)
	var lines []int
	for _, v := range got {
		lines = append(lines, v.line)
	}
	var want []int
	for _, f := range files {
		for _, cg := range f.Comments {
			if strings.Contains(cg.Text(), "planted:") {
				want = append(want, fset.Position(cg.Pos()).Line)
			}
		}
	}
	slices.Sort(lines)
	slices.Sort(want)
	if !slices.Equal(lines, want) {
		t.Fatalf("caught the lines %v, want the planted ones %v:\n%v", lines, want, got)
	}
}

// violation is a rule written in a store.
type violation struct {
	pos  string
	line int
	what string
}

func (v violation) String() string { return v.pos + ": " + v.what }

// ruleViolations finds the rules of files (a store package) by class.
func ruleViolations(fset *token.FileSet, files []*ast.File, info *types.Info) []violation {
	rules := map[string]bool{}
	for _, r := range storeRules {
		rules[r] = true
	}
	answers := map[string]bool{}
	for _, a := range storeAnswers {
		answers[mod+a] = true
	}
	errorType := types.Universe.Lookup("error").Type().Underlying().(*types.Interface)
	inDomain := func(p *types.Package) bool { return p != nil && slices.Contains(pkgs(domain), p.Path()) }
	// domainState is the domain constant e names, if any.
	domainState := func(e ast.Expr) (string, bool) {
		var obj types.Object
		switch x := ast.Unparen(e).(type) {
		case *ast.Ident:
			obj = info.Uses[x]
		case *ast.SelectorExpr:
			obj = info.Uses[x.Sel]
		}
		c, ok := obj.(*types.Const)
		if !ok {
			return "", false
		}
		return c.Pkg().Name() + "." + c.Name(), inDomain(c.Pkg()) || slices.Contains(stateTypes, types.TypeString(c.Type(), nil))
	}
	// refusal is the domain error e names, if it is one a store may not.
	refusal := func(obj types.Object) (string, bool) {
		if obj == nil || !inDomain(obj.Pkg()) {
			return "", false
		}
		name := obj.Pkg().Path() + "." + obj.Name()
		if answers[name] {
			return "", false
		}
		switch o := obj.(type) {
		case *types.Var:
			if o.Parent() != o.Pkg().Scope() || !types.Implements(o.Type(), errorType) {
				return "", false
			}
		case *types.TypeName:
			if !types.Implements(o.Type(), errorType) && !types.Implements(types.NewPointer(o.Type()), errorType) {
				return "", false
			}
		default:
			return "", false
		}
		return obj.Pkg().Name() + "." + obj.Name(), true
	}
	var out []violation
	add := func(n ast.Node, format string, args ...any) {
		p := fset.Position(n.Pos())
		out = append(out, violation{pos: p.String(), line: p.Line, what: fmt.Sprintf(format, args...)})
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.BinaryExpr:
				if x.Op != token.EQL && x.Op != token.NEQ {
					break
				}
				for _, side := range []ast.Expr{x.X, x.Y} {
					if c, ok := domainState(side); ok {
						add(x, "compares with the domain state %s: a decision, or the schema's index, says what it means", c)
					}
				}
			case *ast.CaseClause:
				for _, e := range x.List {
					if c, ok := domainState(e); ok {
						add(e, "switches on the domain state %s: a decision, or the schema's index, says what it means", c)
					}
				}
			case *ast.SelectorExpr:
				if r, ok := refusal(info.Uses[x.Sel]); ok {
					add(x, "names the domain refusal %s: the command's decision refuses", r)
				}
				return false
			case *ast.Ident:
				if r, ok := refusal(info.Uses[x]); ok {
					add(x, "names the domain refusal %s: the command's decision refuses", r)
				}
			case *ast.CallExpr:
				var obj types.Object
				switch fn := ast.Unparen(x.Fun).(type) {
				case *ast.Ident:
					obj = info.Uses[fn]
				case *ast.SelectorExpr:
					if sel, ok := info.Selections[fn]; ok {
						obj = sel.Obj()
					} else {
						obj = info.Uses[fn.Sel]
					}
				}
				if fn, ok := obj.(*types.Func); ok && rules[fn.FullName()] {
					add(x, "calls the rule %s: call the command's decision instead", fn.FullName())
				}
			}
			return true
		})
	}
	return out
}
