package runner

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/recipe"
)

// TestClassesEveryPath: the class names beside an output are written and read back through
// the store for a plain path and a file:// URL alike (a file:// output once got a literal
// "file:" path), a missing side file is none, and a named pipe is refused, not waited on.
func TestClassesEveryPath(t *testing.T) {
	ctx := context.Background()
	c := objstore.New()
	defer c.Close()
	dir := t.TempDir()
	want := map[string][]string{"label": {"neg", "pos"}}
	for _, tc := range []struct {
		name        string
		write, read string
		store       *objstore.Client
	}{
		{"plain", filepath.Join(dir, "a.mldf"), filepath.Join(dir, "a.mldf"), c},
		{"file URL", "file://" + filepath.Join(dir, "b.mldf"), filepath.Join(dir, "b.mldf"), c},
		{"read as file URL", filepath.Join(dir, "c.mldf"), "file://" + filepath.Join(dir, "c.mldf"), c},
		{"nil store", filepath.Join(dir, "d.mldf"), "file://" + filepath.Join(dir, "d.mldf"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := WriteClasses(ctx, tc.store, tc.write+recipe.ClassesSuffix, want); err != nil {
				t.Fatal(err)
			}
			got, err := ReadClasses(ctx, tc.store, tc.read)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("read back %v, %v", got, err)
			}
		})
	}
	if got, err := ReadClasses(ctx, c, filepath.Join(dir, "none.mldf")); got != nil || err != nil {
		t.Fatalf("no side file: %v, %v", got, err)
	}
	fifo := filepath.Join(dir, "p.mldf")
	if err := syscall.Mkfifo(fifo+recipe.ClassesSuffix, 0o644); err != nil {
		t.Skip("no named pipes:", err)
	}
	if _, err := ReadClasses(ctx, c, fifo); err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Fatalf("named pipe: %v", err)
	}
	os.Remove(fifo + recipe.ClassesSuffix)
}
