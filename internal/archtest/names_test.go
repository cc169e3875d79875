package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// nameSyntax are the objstore calls that read a name's syntax (is it a URL, which store):
// the storage seam's own business. Other packages use the operations that serve local names
// and URLs alike (Key, Identify, FolderOf, TargetOf, Ref, OpenCheck, StatInput, IsDir) and the
// capabilities of what is named or opened (Folder.Dir, Target.Path, ReaderAt.File).
var nameSyntax = map[string]bool{"Parse": true, "IsURL": true, "LocalPath": true, "Location": true}

// TestOnlyObjstoreReadsNames: no package's code outside objstore calls objstore.Parse,
// IsURL or LocalPath or holds an objstore.Location (docs/ARCHITECTURE.md, storage).
func TestOnlyObjstoreReadsNames(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" ||
				name == "python" || name == "node_modules" || filepath.ToSlash(p) == "../../objstore") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		local := ""
		for _, s := range f.Imports {
			if ip, _ := strconv.Unquote(s.Path.Value); ip == module+"/objstore" {
				local = "objstore"
				if s.Name != nil {
					local = s.Name.Name
				}
			}
		}
		if local == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == local && nameSyntax[sel.Sel.Name] {
					t.Errorf("%s: objstore.%s outside objstore: use an operation that serves paths and URLs alike",
						fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
