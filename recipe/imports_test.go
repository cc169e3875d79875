package recipe

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRecipeImportsNoSourceNorContainer: the recipe plans against the registries; it
// imports no source package nor field package (each registers itself), nor the pipeline,
// nor a container other than MLDF's layout (format/mldf: field names, type ids, page sizes).
func TestRecipeImportsNoSourceNorContainer(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for imp := range strings.Lines(string(out)) {
		imp = strings.TrimSpace(strings.TrimPrefix(imp, "github.com/mldf/convert/"))
		switch {
		case imp == "format/mldf": // the layout's names and limits
		case strings.HasPrefix(imp, "sources/"), strings.HasPrefix(imp, "encoders/"), strings.HasPrefix(imp, "format/"),
			imp == "pipeline", imp == "runner", imp == "pagewriter":
			t.Errorf("recipe imports %s", imp)
		}
	}
}
