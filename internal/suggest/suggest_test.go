package suggest

import (
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"fields", "fields", 0},
		{"feilds", "fields", 1}, // one swap
		{"imgaes", "images", 1},
		{"max-resolutoin", "max-resolution", 1},
		{"worker", "workers", 1},
		{"kitten", "sitting", 3},
		{"ca", "abc", 3}, // optimal string alignment, not full Damerau (which says 2)
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
}

func TestClosest(t *testing.T) {
	commands := []string{"run", "validate", "images", "inspect", "verify", "cat", "export", "index", "merge", "storage"}
	keys := []string{"source", "fields", "output", "format", "workers", "shard", "shards", "report", "rejects"}
	for _, c := range []struct {
		name       string
		candidates []string
		want       string
	}{
		{"imgaes", commands, "images"},
		{"IMAGES", commands, "images"},
		{"verfy", commands, "verify"},
		{"cta", commands, "cat"},
		{"exp", commands, "export"},  // the one candidate it begins
		{"in", commands, ""},         // too short to be a prefix; two edits from everything
		{"ins", commands, "inspect"}, // the one candidate it begins
		{"xyzzy", commands, ""},      // nothing near
		{"feilds", keys, "fields"},
		{"shrads", keys, "shards"}, // nearest (1), not the first within 2 (shard)
		{"reprot", keys, "report"},
		{"", keys, ""},
		{strings.Repeat("a", MaxLen+1), []string{strings.Repeat("a", MaxLen+1)}, ""},
		{"workers", nil, ""},
	} {
		if got := Closest(c.name, c.candidates); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func FuzzClosest(f *testing.F) {
	f.Add("feilds", "fields")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, a, b string) {
		d := Distance(a, b)
		if d < 0 || d > max(len(a), len(b)) || (d == 0) != (a == b) {
			t.Fatalf("Distance(%q, %q) = %d", a, b, d)
		}
		if got := Closest(a, []string{b}); got != "" && got != b {
			t.Fatalf("Closest returned %q, not a candidate", got)
		}
	})
}
