package sample

import (
	"fmt"
	"testing"
)

// TestFind: Find looks at the hint first and falls back to a scan; a missing name is -1.
func TestFind(t *testing.T) {
	s := Sample{Values: []Column{{Name: "a"}, {Name: "b"}, {Name: "a"}, {Name: "c"}}}
	for _, tc := range []struct {
		name       string
		hint, want int
	}{
		{"a", 0, 0}, {"a", 2, 2}, {"a", 1, 0}, {"b", 1, 1}, {"c", 9, 3}, {"c", -1, 3}, {"z", 0, -1},
	} {
		if got := s.Find(tc.name, tc.hint); got != tc.want {
			t.Errorf("Find(%q, %d) = %d, want %d", tc.name, tc.hint, got, tc.want)
		}
	}
}

// BenchmarkFindWide finds every column of a 4000-column sample in order, as the pipeline
// does for each sample of a wide table.
func BenchmarkFindWide(b *testing.B) {
	var s Sample
	for i := range 4000 {
		s.Values = append(s.Values, Column{Name: fmt.Sprintf("c%d", i)})
	}
	for b.Loop() {
		next := 0
		for i := range s.Values {
			if k := s.Find(s.Values[i].Name, next); k >= 0 {
				next = k + 1
			}
		}
	}
}
