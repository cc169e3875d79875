package tarsrc

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// TestRegisteredUnknownMembers: the registered tar type marks a sample with a member no
// field reads, also once cut to a shard's range, unless unknown_members is ignore.
func TestRegisteredUnknownMembers(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range []string{"a.jpg", "a.txt", "b.jpg"} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: 1})
		tw.Write([]byte{'x'})
	}
	tw.Close()
	shard := filepath.Join(t.TempDir(), "s.tar")
	if err := os.WriteFile(shard, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	spec, ok := sources.Lookup("tar")
	if !ok {
		t.Fatal("tar is not registered")
	}
	for _, c := range []struct {
		unknown string
		want    []bool // per sample: marked
	}{{"", []bool{true, false}}, {"reject", []bool{true, false}}, {"ignore", []bool{false, false}}} {
		cfg := sources.Config{Inputs: []string{shard}, Options: map[string]any{}, Reads: []sources.Read{{From: "jpg", Required: true}}}
		if c.unknown != "" {
			cfg.Options["unknown_members"] = c.unknown
		}
		src, err := spec.Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		sh, ok := src.(sources.Sharder)
		if !ok {
			t.Fatalf("%T is not a sources.Sharder", src)
		}
		part, err := sh.Range(0, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []sources.Source{src, part} {
			var got []bool
			err := s.Run(context.Background(), func(s sample.Sample) error {
				got = append(got, errors.Is(s.Err, ErrUnknownMember))
				return nil
			})
			if err != nil || len(got) != 2 || got[0] != c.want[0] || got[1] != c.want[1] {
				t.Errorf("unknown_members %q, %T: marked %v (%v), want %v", c.unknown, s, got, err, c.want)
			}
		}
	}
}
