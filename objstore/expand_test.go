package objstore

import (
	"context"
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
		{"s3://b/shard-{000000..000002}.tar", []string{"s3://b/shard-000000.tar", "s3://b/shard-000001.tar", "s3://b/shard-000002.tar"}},
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

func FuzzExpandBraces(f *testing.F) {
	for _, s := range []string{"a{1..3}", "{a,b{c,d}}", "{0..10..3}", "{{,}", "x{a..z}{00..99}", "}{", "{1..2..0}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := ExpandBraces(s)
		if err != nil {
			if !errors.Is(err, ErrPattern) {
				t.Fatalf("error not ErrPattern: %v", err)
			}
			return
		}
		if len(out) == 0 || len(out) > maxExpansion {
			t.Fatalf("%q expanded to %d names", s, len(out))
		}
	})
}

func TestExpandLocal(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"s-00.tar", "s-01.tar", "s-02.tar.gz", "other.tar", "lit[1].jsonl"} {
		os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644)
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	j := func(s string) string { return filepath.Join(dir, s) }
	c := New()
	defer c.Close()
	ctx := context.Background()
	// s-00.tar twice: once plainly, once as a file:// URL.
	if _, err := c.Expand(ctx, []string{j("s-{00..01}.tar"), "file://" + j("s-00.tar")}); !errors.Is(err, ErrPattern) {
		t.Fatalf("duplicate through file://: %v", err)
	}
	got, err := c.Expand(ctx, []string{j("s-{00..01}.tar"), j("*.gz"), j("other.tar"), j("lit[1].jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, a := range got {
		paths = append(paths, a.URL)
		if want := int64(len(filepath.Base(a.URL))); a.Size != want {
			t.Errorf("%s: size %d, want %d", a.URL, a.Size, want)
		}
	}
	if want := []string{j("s-00.tar"), j("s-01.tar"), j("s-02.tar.gz"), j("other.tar"), j("lit[1].jsonl")}; !reflect.DeepEqual(paths, want) {
		t.Fatalf("Expand = %q, want %q", paths, want)
	}
	got, err = c.Expand(ctx, []string{"file://" + j("s-0?.tar")})
	if err != nil || len(got) != 2 || got[0].URL != "file://"+j("s-00.tar") {
		t.Fatalf("file:// glob = %+v, %v", got, err)
	}
	for _, bad := range []struct {
		patterns []string
		kind     error
	}{
		{[]string{j("s-{00..05}.tar")}, ErrNotFound},             // s-02.tar missing
		{[]string{j("*.zst")}, ErrPattern},                       // no match
		{[]string{j("s-00.tar"), j("s-0[0-1].tar")}, ErrPattern}, // listed twice
		{[]string{j("sub")}, ErrBadURL},                          // a directory
		{[]string{j("[")}, ErrPattern},
		{[]string{"ftp://x/y"}, ErrBadURL},
	} {
		_, err := c.Expand(ctx, bad.patterns)
		if err == nil || !errors.Is(err, bad.kind) {
			t.Errorf("Expand(%q) = %v, want %v", bad.patterns, err, bad.kind)
		} else if !strings.Contains(err.Error(), dir) && !strings.Contains(err.Error(), "ftp://") {
			t.Errorf("error does not name the path: %v", err)
		}
	}
	if _, err := c.Expand(ctx, []string{j("s-05.tar")}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file is not also os.ErrNotExist: %v", err)
	}
}
