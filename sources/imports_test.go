package sources_test

import (
	"os/exec"
	"strings"
	"testing"
)

// containers are the packages that write or read an output format: no source may import
// one (a single-cell reader implements the neutral internal/cells types, not the SCDL
// writer's), so that a format can change without touching the sources.
var containers = []string{"scdl", "beton", "mldf", "pagewriter", "pipeline", "recipe", "format/scdl", "format/beton"}

// TestNoSourceImportsAContainer lists the module's import graph and fails on an arrow from
// a source package to a container.
func TestNoSourceImportsAContainer(t *testing.T) {
	const mod = "github.com/mldf/convert/"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "../sources/...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], mod)
		if pkg == "sources/scdlarchive" {
			continue // reads SCDL archives: the one source of that container's files
		}
		for _, imp := range fields[1:] {
			imp, ok := strings.CutPrefix(imp, mod)
			if !ok {
				continue
			}
			for _, c := range containers {
				if imp == c || (strings.HasSuffix(c, "/") && strings.HasPrefix(imp, c)) {
					t.Errorf("%s imports %s, a container", pkg, imp)
				}
			}
		}
	}
}
