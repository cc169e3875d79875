package quote

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQ(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want string
	}{
		{"empty", "", `""`},
		{"short", "a/b.jpg", `"a/b.jpg"`},
		{"at the limit", strings.Repeat("k", MaxBytes), strconv.Quote(strings.Repeat("k", MaxBytes))},
		{"one over", strings.Repeat("k", MaxBytes+1), strconv.Quote(strings.Repeat("k", MaxBytes)) + "…(257 bytes)"},
		{"far over", strings.Repeat("k", 50<<20), strconv.Quote(strings.Repeat("k", MaxBytes)) + "…(52428800 bytes)"},
		// A 2-byte rune straddling the cut is dropped whole, never split.
		{"rune at the cut", strings.Repeat("k", MaxBytes-1) + "é" + "zzz", strconv.Quote(strings.Repeat("k", MaxBytes-1)) + "…(260 bytes)"},
		// Not UTF-8: cut at the byte.
		{"binary", strings.Repeat("\xff", MaxBytes+10), strconv.Quote(strings.Repeat("\xff", MaxBytes)) + "…(266 bytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Q(tc.in); got != tc.want {
				t.Fatalf("Q = %.80s…, want %.80s…", got, tc.want)
			}
			if got := B([]byte(tc.in)); got != tc.want {
				t.Fatalf("B = %.80s…, want %.80s…", got, tc.want)
			}
			if len(Q(tc.in)) > 4*MaxBytes+32 {
				t.Fatalf("Q is %d bytes", len(Q(tc.in)))
			}
		})
	}
}

func TestS(t *testing.T) {
	long := strings.Repeat("é", 1000) // 2000 bytes
	got := S(long)
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "…(2000 bytes)") || len(got) > MaxBytes+20 {
		t.Fatalf("S = %q", got)
	}
	if S("short/path") != "short/path" {
		t.Fatal("short value changed")
	}
}
