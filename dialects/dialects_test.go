package dialects_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/dialects"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	// Every test binary knows -update, so go test ./... -update works.
	_ "github.com/parleyhq/parley/translate/golden"
)

const module = "github.com/parleyhq/parley"

type pkg struct {
	ImportPath  string
	Imports     []string
	Deps        []string
	TestImports []string
}

// list runs go list -json on patterns.
func list(t *testing.T, patterns ...string) []pkg {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps=false", "-json"}, patterns...)...)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var ps []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

// dialectPackages are the packages the list imports under translate/: the
// dialect packages, by definition.
func dialectPackages(t *testing.T) []string {
	var out []string
	for _, imp := range list(t, "./dialects")[0].Imports {
		if strings.HasPrefix(imp, module+"/translate/") {
			out = append(out, imp)
		}
	}
	if len(out) != len(dialects.All()) {
		t.Fatalf("the list imports %d dialect packages for %d dialects", len(out), len(dialects.All()))
	}
	return out
}

// TestLayersAreDialectBlind: the layers above translate import no dialect
// package, directly or through another package; the command wires the
// list in. A dialect package imports no other.
func TestLayersAreDialectBlind(t *testing.T) {
	ds := dialectPackages(t)
	for _, p := range list(t, "./server", "./dispatch", "./cloud", "./store/...", "./stored", "./tasks", "./config") {
		for _, dep := range p.Deps {
			if slices.Contains(ds, dep) {
				t.Errorf("%s depends on the dialect package %s; take it from the dialect's descriptor instead", p.ImportPath, dep)
			}
		}
	}
	for _, p := range list(t, ds...) {
		for _, imp := range append(p.Imports, p.TestImports...) {
			if slices.Contains(ds, imp) && imp != p.ImportPath {
				t.Errorf("%s imports %s: dialects meet only in the canonical model", p.ImportPath, imp)
			}
		}
	}
}

// TestList: every dialect of the canonical enum is listed once, and every
// endpoint pattern has one owner, or one default among dialects that
// claim it by header.
func TestList(t *testing.T) {
	seen := map[parleyv1.Dialect]bool{}
	owners := map[string][]bool{} // pattern -> claims set, per dialect
	for _, d := range dialects.All() {
		if seen[d.Enum] {
			t.Errorf("%s is listed twice", d.Name())
		}
		seen[d.Enum] = true
		for _, rt := range d.Routes {
			if rt.Op == 0 && rt.Resolve == nil {
				t.Errorf("%s %s serves no operation", d.Name(), rt.Pattern)
			}
			owners[rt.Pattern] = append(owners[rt.Pattern], rt.Claims != nil)
			if rt.Claims != nil && rt.Claims(http.Header{}) {
				t.Errorf("%s %s claims a request with no headers", d.Name(), rt.Pattern)
			}
		}
	}
	for v := range parleyv1.Dialect_name {
		d := parleyv1.Dialect(v)
		if d != parleyv1.Dialect_DIALECT_UNSPECIFIED && d != parleyv1.Dialect_DIALECT_CANONICAL && !seen[d] {
			t.Errorf("%s has no descriptor in the list", d)
		}
	}
	for p, claims := range owners {
		if n := len(claims) - countTrue(claims); len(claims) > 1 && n != 1 {
			t.Errorf("%s is shared by %d dialects, %d of them without Claims; exactly one must answer the rest", p, len(claims), n)
		}
	}
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// TestMarksAreDeclaredInOnePlace: what a dialect remembers about its own
// spelling is declared in its marks.go and nowhere else, each key once,
// so that one file reads as the dialect's whole record.
func TestMarksAreDeclaredInOnePlace(t *testing.T) {
	for _, imp := range dialectPackages(t) {
		dir := filepath.Join("..", strings.TrimPrefix(imp, module+"/"))
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		keys := map[string]bool{}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			file, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.BasicLit:
					if n.Kind == token.STRING && strings.HasPrefix(n.Value, `"@`) {
						if filepath.Base(f) != "marks.go" {
							t.Errorf("%s: the mark %s is spelled outside marks.go", fset.Position(n.Pos()), n.Value)
						} else if keys[n.Value] {
							t.Errorf("%s: the mark %s is declared twice", fset.Position(n.Pos()), n.Value)
						}
						keys[n.Value] = true
					}
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok && x.Name == "jsonx" && n.Sel.Name == "NewMark" && filepath.Base(f) != "marks.go" {
						t.Errorf("%s: a mark is declared outside marks.go", fset.Position(n.Pos()))
					}
				}
				return true
			})
		}
	}
}
