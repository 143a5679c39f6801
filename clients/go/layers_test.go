package baton

// The parts of the client use each other one way only (clients/README.md, "How each client is
// built"): every name a file of the package uses is declared in a file of its own part or of a
// part to its left. Go has one package here, so the check is on names, resolved by go/types.

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// layers: each file's part, from left to right (the names are layerNames).
var layers = map[string]int{
	"errors.go":   0, // the typed errors, returned by every part
	"http.go":     1, // the transport, with auth.go and tracing.go
	"auth.go":     1,
	"tracing.go":  1,
	"retries.go":  2,
	"calls.go":    3,
	"outcomes.go": 3,
	"holder.go":   4,
	"wait.go":     5,
	"lockall.go":  5,
	"claims.go":   6,
	"client.go":   7, // the facade
}

var layerNames = []string{"errors", "http", "retries", "calls", "holder", "wait", "claims", "facade"}

func TestUnit_LayersImportOneWay(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for name, f := range pkgs["baton"].Files {
		if _, ok := layers[filepath.Base(name)]; !ok {
			t.Errorf("%s belongs to no part: add it to layers", name)
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	check := func(imp types.Importer) (*types.Package, error) {
		return (&types.Config{Importer: imp}).Check("baton", fset, files, info)
	}
	pkg, err := check(importer.ForCompiler(fset, "gc", nil))
	if err != nil { // no export data for the standard library: type-check it from source
		info.Uses = map[*ast.Ident]types.Object{}
		if pkg, err = check(importer.ForCompiler(fset, "source", nil)); err != nil {
			t.Fatal(err)
		}
	}
	wrong := map[string]bool{}
	uses := 0
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		from := filepath.Base(fset.Position(id.Pos()).Filename)
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		uses++
		if layers[to] > layers[from] {
			wrong[from+" ("+layerNames[layers[from]]+") uses "+obj.Name()+" of "+to+" ("+layerNames[layers[to]]+")"] = true
		}
	}
	if uses < 100 {
		t.Fatalf("only %d uses resolved: the check proves nothing", uses)
	}
	var list []string
	for w := range wrong {
		list = append(list, w)
	}
	sort.Strings(list)
	for _, w := range list {
		t.Error(w)
	}
}
