package mldf_test

import (
	"bufio"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// hexLine matches the worked-example lines of docs/FORMAT.md §11: "@OFFSET | bytes | meaning".
var hexLine = regexp.MustCompile(`^@(\d+)\s*\|\s*((?:[0-9a-f]{2} ?)+)\|`)

// TestFormatDocHex keeps docs/FORMAT.md §11 and §14 and the golden files in step: every hex
// line of the document must match the bytes at its offset of the section's golden file
// (§11: tiny.mldf, §14: classes.mldf).
func TestFormatDocHex(t *testing.T) {
	doc, err := os.Open(filepath.Join("..", "..", "docs", "FORMAT.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer doc.Close()
	tiny, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	classes, err := os.ReadFile(classesPath)
	if err != nil {
		t.Fatal(err)
	}
	golden := tiny
	lines, classLines := 0, 0
	sc := bufio.NewScanner(doc)
	for sc.Scan() {
		switch {
		case strings.HasPrefix(sc.Text(), "## 14."):
			golden = classes
		case strings.HasPrefix(sc.Text(), "## "):
			golden = tiny
		}
		m := hexLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		lines++
		if &golden[0] == &classes[0] {
			classLines++
		}
		off, _ := strconv.Atoi(m[1])
		want, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(m[2]), " ", ""))
		if err != nil {
			t.Fatalf("FORMAT.md line %q: %v", sc.Text(), err)
		}
		if off+len(want) > len(golden) {
			t.Errorf("FORMAT.md @%d: past the end of the golden file", off)
			continue
		}
		if got := golden[off : off+len(want)]; string(got) != string(want) {
			t.Errorf("FORMAT.md @%d: % x, golden file has % x", off, want, got)
		}
	}
	if lines-classLines < 20 || classLines < 15 {
		t.Errorf("found %d hex lines in FORMAT.md §11 and %d in §14, want at least 20 and 15", lines-classLines, classLines)
	}
}
