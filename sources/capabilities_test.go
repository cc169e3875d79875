package sources

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/mldf/convert/sample"
)

func TestSkipped(t *testing.T) {
	var s Skipped
	if s.Counts() != nil {
		t.Fatal("zero value has counts")
	}
	for _, n := range []string{"a/b.SVG", "x.svg", "dir.v2/README", "LICENSE", ".hidden", "a/b.tar.GZ",
		"a/b." + strings.Repeat("x", 40), "a/b.\xff", `back\slash.Txt`} {
		s.Add(n)
	}
	s.AddKind("(link)")
	want := map[string]int64{".svg": 2, "": 3, ".gz": 1, OtherExt: 2, ".txt": 1, "(link)": 1}
	if got := s.Counts(); !maps.Equal(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	s.Reset()
	if s.Counts() != nil {
		t.Error("counts after Reset")
	}
}

type counting struct{ n map[string]int64 }

func (counting) Len() int64                                           { return 0 }
func (counting) Run(context.Context, func(sample.Sample) error) error { return nil }
func (c counting) SkippedFiles() map[string]int64                     { return c.n }

type plain struct{}

func (plain) Len() int64                                           { return 0 }
func (plain) Run(context.Context, func(sample.Sample) error) error { return nil }

type wrap struct{ Source }

func (w wrap) Unwrap() Source { return w.Source }

func TestSkippedFilesThroughWrappers(t *testing.T) {
	c := counting{map[string]int64{".svg": 9}}
	if got := SkippedFiles(wrap{wrap{c}}); got[".svg"] != 9 {
		t.Errorf("through wrappers: %v", got)
	}
	if got := SkippedFiles(wrap{plain{}}); got != nil {
		t.Errorf("no counter: %v", got)
	}
}
