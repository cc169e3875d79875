package tarsrc

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestExpandBraces(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"a.tar", []string{"a.tar"}},
		{"data-{000..003}.tar", []string{"data-000.tar", "data-001.tar", "data-002.tar", "data-003.tar"}},
		{"d{8..11}", []string{"d8", "d9", "d10", "d11"}},
		{"d{1..10..4}", []string{"d1", "d5", "d9"}},
		{"d{3..1}", []string{"d3", "d2", "d1"}},
		{"d{08..10}", []string{"d08", "d09", "d10"}},
		{"d{-1..1}", []string{"d-1", "d0", "d1"}},
		{"{a,b}/{x,y}.tar", []string{"a/x.tar", "a/y.tar", "b/x.tar", "b/y.tar"}},
		{"{a,b{1..2}}.tar", []string{"a.tar", "b1.tar", "b2.tar"}},
		{"{a..c}", []string{"a", "b", "c"}},
		{"{a,}x", []string{"ax", "x"}},
		{"lit{abc}.tar", []string{"lit{abc}.tar"}},
		{"open{1..2", []string{"open{1..2"}},
		{"{x}{1..2}", []string{"{x}1", "{x}2"}},
	}
	for _, tc := range tests {
		got, err := ExpandBraces(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ExpandBraces(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := ExpandBraces("{0..99999999}"); !errors.Is(err, ErrPattern) {
		t.Errorf("huge range: %v", err)
	}
}

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"s-00.tar", "s-01.tar", "s-02.tar.gz", "other.tar"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	j := func(s string) string { return filepath.Join(dir, s) }
	got, err := Expand([]string{j("s-{00..01}.tar"), j("*.gz"), j("other.tar")})
	if err != nil || !reflect.DeepEqual(got, []string{j("s-00.tar"), j("s-01.tar"), j("s-02.tar.gz"), j("other.tar")}) {
		t.Fatalf("Expand = %q, %v", got, err)
	}
	for _, bad := range [][]string{
		{j("s-{00..05}.tar")},              // s-03 missing
		{j("*.zst")},                       // no match
		{j("s-00.tar"), j("s-0[0-1].tar")}, // listed twice
		{j("sub")},
		{j("[")},
	} {
		if _, err := Expand(bad); err == nil {
			t.Errorf("Expand(%q) succeeded", bad)
		} else if !errors.Is(err, ErrPattern) && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Expand(%q) = %v", bad, err)
		} else if !strings.Contains(err.Error(), dir) {
			t.Errorf("error does not name the path: %v", err)
		}
	}
}
