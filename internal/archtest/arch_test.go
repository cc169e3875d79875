package archtest

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/mldf/convert"

// layer is one line of the document's layers block: a name and the package patterns in it.
type layer struct {
	name     string
	patterns []string
}

// readLayers parses the fenced ```layers block of docs/ARCHITECTURE.md, lowest layer first.
func readLayers(t *testing.T, doc string) []layer {
	t.Helper()
	f, err := os.Open(doc)
	if err != nil {
		t.Fatalf("open %s: %v", doc, err)
	}
	defer f.Close()
	var out []layer
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "```layers":
			in = true
			continue
		case in && line == "```":
			in = false
			continue
		case !in || line == "":
			continue
		}
		name, list, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("%s: layers line without a colon: %q", doc, line)
		}
		var pats []string
		for _, p := range strings.Split(list, ",") {
			if p = strings.TrimSpace(p); p != "" {
				pats = append(pats, p)
			}
		}
		out = append(out, layer{name: strings.TrimSpace(name), patterns: pats})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s has no ```layers block", doc)
	}
	return out
}

// layerOf returns the index of the layer whose most specific pattern matches pkg: an exact
// path beats "dir/*" (every package below dir), and a longer prefix beats a shorter one.
func layerOf(layers []layer, pkg string) int {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, p := range l.patterns {
			n := -1
			if p == pkg {
				n = len(p) + 1
			} else if dir, ok := strings.CutSuffix(p, "/*"); ok && strings.HasPrefix(pkg, dir+"/") {
				n = len(dir)
			}
			if n > bestLen {
				best, bestLen = i, n
			}
		}
	}
	return best
}

// packages maps every package directory of the module (relative path) to the module
// packages its non-test files import, over every build tag (tests may import anything).
func packages(t *testing.T, root string) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "python" || name == "node_modules") {
				return filepath.SkipDir
			}
			if p != root {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if strings.HasSuffix(name, "_test.go") { // a package of tests only is still a package
			if _, ok := pkgs[rel]; !ok {
				pkgs[rel] = nil
			}
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return fmt.Errorf("parse %s: %w", p, err)
		}
		imps := pkgs[rel]
		for _, s := range f.Imports {
			ip, err := strconv.Unquote(s.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: import %s: %w", p, s.Path.Value, err)
			}
			if own, ok := strings.CutPrefix(ip, module+"/"); ok {
				imps = append(imps, own)
			}
		}
		pkgs[rel] = imps
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func TestImportsFollowLayers(t *testing.T) {
	root := filepath.Join("..", "..")
	layers := readLayers(t, filepath.Join(root, "docs", "ARCHITECTURE.md"))
	pkgs := packages(t, root)
	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		if p == "." {
			continue
		}
		lp := layerOf(layers, p)
		if lp < 0 {
			t.Errorf("package %s is in no layer of docs/ARCHITECTURE.md: add it", p)
			continue
		}
		for _, imp := range pkgs[p] {
			li := layerOf(layers, imp)
			if li > lp {
				t.Errorf("%s (layer %q) imports %s (layer %q, higher): an arrow running back up",
					p, layers[lp].name, imp, layers[li].name)
			}
		}
	}
}

// TestEveryPatternUsed keeps the document honest the other way: a pattern that names no
// package is a stale line.
func TestEveryPatternUsed(t *testing.T) {
	root := filepath.Join("..", "..")
	layers := readLayers(t, filepath.Join(root, "docs", "ARCHITECTURE.md"))
	pkgs := packages(t, root)
	for _, l := range layers {
		for _, pat := range l.patterns {
			used := false
			for p := range pkgs {
				if ok, _ := path.Match(pat, p); ok || p == pat || (strings.HasSuffix(pat, "/*") && strings.HasPrefix(p, strings.TrimSuffix(pat, "*"))) {
					used = true
					break
				}
			}
			if !used {
				t.Errorf("docs/ARCHITECTURE.md layer %q names %q, which matches no package", l.name, pat)
			}
		}
	}
}

func TestLayerOf(t *testing.T) {
	layers := []layer{
		{"base", []string{"internal/*"}},
		{"formats", []string{"format/*"}},
		{"fields", []string{"format/mldf/decode", "internal/imgdec"}},
	}
	for _, c := range []struct {
		pkg  string
		want int
	}{
		{"internal/quote", 0},
		{"internal/imgdec", 2}, // the exact path beats internal/*
		{"format/mldf", 1},
		{"format/mldf/decode", 2},
		{"formats", -1}, // "format/*" is below format/, not a prefix of the name
		{"cmd/convert", -1},
	} {
		if got := layerOf(layers, c.pkg); got != c.want {
			t.Errorf("layerOf(%q) = %d, want %d", c.pkg, got, c.want)
		}
	}
}
