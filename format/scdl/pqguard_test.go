package scdl

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/internal/pqfile"
)

// TestFeatureTableFooterGuarded: a 42-byte feature table whose footer claims 2^31-1 schema
// elements is refused by the guarded opener (an error naming the file), where parquet-go
// alone would allocate for the claim.
func TestFeatureTableFooterGuarded(t *testing.T) {
	b := []byte("PAR1")
	b = append(b, 0x15, 0x02, 0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00)
	for len(b) < 34 {
		b = append(b, 0)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(b)-4))
	b = append(b, "PAR1"...)
	path := filepath.Join(t.TempDir(), "dataframe_0.parquet")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := tableInfo(FeatureBlock{File: path})
	if !errors.Is(err, pqfile.ErrCorrupt) || !strings.Contains(err.Error(), path) {
		t.Fatalf("tableInfo: %v", err)
	}
	if _, err := readTable(FeatureBlock{File: path}); !errors.Is(err, pqfile.ErrCorrupt) {
		t.Fatalf("readTable: %v", err)
	}
}
