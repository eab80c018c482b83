package doctest_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// publicPackages are the packages outside code imports; compaction is
// left out, as its doc says outside code cannot use it.
var publicPackages = []string{"lsm", "vfs", "memtable", "sstable", "filter", "wal"}

// internalOnly are the exported names that take an internal type on
// purpose, each with its doc saying so.
var internalOnly = map[string]bool{
	"filter.OpenCacheLineIn": true, // the engine's: outside code passes nil, which is OpenCacheLine
}

// TestPublicAPINamesNoInternalType: the exported functions, methods and
// struct fields of the public packages, as go doc prints them, name no
// type of an internal package, which outside code could not name (each
// package aliases the ones it uses: memtable/types.go, sstable/types.go);
// and their Examples import no internal package, so a user can run them
// as written.
func TestPublicAPINamesNoInternalType(t *testing.T) {
	for _, pkg := range publicPackages {
		dir := filepath.Join("..", "..", pkg)
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", pkg, err)
		}
		for _, name := range files {
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			internal := internalImports(f)
			if strings.HasSuffix(name, "_test.go") {
				if strings.HasSuffix(f.Name.Name, "_test") && len(internal) > 0 && hasExample(f) {
					t.Errorf("%s: an Example file imports internal packages %v", name, keys(internal))
				}
				continue
			}
			for _, use := range exportedUses(f, internal) {
				if !internalOnly[pkg+"."+use.decl] {
					t.Errorf("%s: %s names %s", name, use.decl, use.typ)
				}
			}
		}
	}
}

// internalImports maps the names a file imports internal packages under
// to their paths.
func internalImports(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if !strings.Contains(path, "/internal/") {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		m[name] = path
	}
	return m
}

func hasExample(f *ast.File) bool {
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && strings.HasPrefix(fn.Name.Name, "Example") {
			return true
		}
	}
	return false
}

type internalUse struct{ decl, typ string }

// exportedUses lists the internal types named in the signatures of f's
// exported functions and methods (on exported types) and in the exported
// fields of its exported structs.
func exportedUses(f *ast.File, internal map[string]string) []internalUse {
	var uses []internalUse
	find := func(decl string, n ast.Node) {
		if n == nil {
			return
		}
		ast.Inspect(n, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && internal[x.Name] != "" {
					uses = append(uses, internalUse{decl, x.Name + "." + sel.Sel.Name})
				}
			}
			return true
		})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Recv != nil && !receiverExported(d.Recv) {
				continue
			}
			find(d.Name.Name, d.Type)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				ts, ok := s.(*ast.TypeSpec)
				if !ok || !ts.Name.IsExported() || ts.Assign != 0 { // aliases are the remedy
					continue
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, fld := range st.Fields.List {
					for _, n := range fld.Names {
						if n.IsExported() {
							find(ts.Name.Name+"."+n.Name, fld.Type)
						}
					}
				}
			}
		}
	}
	return uses
}

func receiverExported(recv *ast.FieldList) bool {
	t := recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
