package tarsrc

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// describeSample is what a resume test compares of a sample: key, origin, error, values.
func describeSample(s sample.Sample) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q %q", s.Key, s.Origin)
	if s.Err != nil {
		fmt.Fprintf(&b, " err=%v", s.Err)
	}
	for _, c := range s.Values {
		fmt.Fprintf(&b, " %s=%d/%q/%x", c.Name, c.Value.Kind, c.Value.Name, sha256.Sum256(c.Value.Bytes))
	}
	return b.String()
}

// positioned runs src and returns its samples and the token after each.
func positioned(t *testing.T, src sources.Source) ([]string, [][]byte) {
	t.Helper()
	var got []string
	var tokens [][]byte
	err := src.(sources.PositionedRunner).RunPositioned(context.Background(), func(s sample.Sample, after func() []byte) error {
		got = append(got, describeSample(s))
		tokens = append(tokens, after())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, tokens
}

// resumeShards writes shards that exercise every kind of place: keys in order then out of
// order (wdsShard's last samples), GNU long names, links and name-less members between
// samples, an empty shard, a gzip and a zstd shard, a shard whose key order breaks after a
// place with a duplicate of a key before it, and a shard broken in its middle.
func resumeShards(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, _ := wdsShard(t, "a", 4)
	b, _ := wdsShard(t, "b", 3)
	c, _ := wdsShard(t, "c", 3)
	var dup []member
	for _, k := range []string{"k1", "k3", "k5", "k7", "k2", "k3", "k8"} {
		dup = append(dup, member{name: k + ".txt", data: []byte("text of " + k)}, member{name: k + ".cls", data: []byte("1")})
	}
	broken := tarBytes(t, a)
	off := strings.Index(string(broken), "a/000002.jpg")
	copy(broken[off+148:], "garbage!") // the checksum of a header: the shard ends there
	return []string{
		write("a.tar", tarBytes(t, a)),
		write("empty.tar", tarBytes(t, nil)),
		write("b.tar.gz", gz(t, tarBytes(t, b))),
		write("c.tar.zst", zst(t, tarBytes(t, c))),
		write("dup.tar", tarBytes(t, dup)),
		write("broken.tar", broken),
		write("last.tar", tarBytes(t, []member{{name: "z.txt", data: []byte("z")}})),
	}
}

// TestResumeAtEverySample: resuming from the token after any sample gives exactly the
// samples after it (keys, origins, errors, values), in uncompressed shards by their byte
// offset, in compressed ones by reading the shard again; a resumed source's own tokens
// resume it in turn; and a key repeated after the place is still caught as the full run
// catches it.
func TestResumeAtEverySample(t *testing.T) {
	shards := resumeShards(t)
	src, err := New(shards, Options{Parallel: 3, ReadAhead: 2})
	if err != nil {
		t.Fatal(err)
	}
	all, tokens := positioned(t, src)
	if want := 8 + 0 + 7 + 7 + 7 + 3 + 1; len(all) != want {
		t.Fatalf("%d samples, want %d:\n%s", len(all), want, strings.Join(all, "\n"))
	}
	var seeks, rereads int
	for k, tok := range tokens {
		var p position
		if err := json.Unmarshal(tok, &p); err != nil {
			t.Fatalf("token %d %s: %v", k, tok, err)
		}
		switch {
		case p.Off > 0:
			seeks++
		case p.N > 0:
			rereads++
		}
		next, err := src.Resume(0, tok)
		if err != nil {
			t.Fatalf("resume after sample %d (%s): %v", k, tok, err)
		}
		rest, more := positioned(t, next)
		if got, want := strings.Join(rest, "\n"), strings.Join(all[k+1:], "\n"); got != want {
			t.Fatalf("resumed after sample %d (%s):\n%s\nwant\n%s", k, tok, got, want)
		}
		for j, tok2 := range more {
			if j != 0 && j != len(more)/2 {
				continue
			}
			again, err := next.(*Source).Resume(0, tok2)
			if err != nil {
				t.Fatalf("resume after sample %d then %d (%s): %v", k, j, tok2, err)
			}
			rest2, _ := positioned(t, again)
			if got, want := strings.Join(rest2, "\n"), strings.Join(all[k+j+2:], "\n"); got != want {
				t.Fatalf("resumed after %d then %d (%s):\n%s\nwant\n%s", k, j, tok2, got, want)
			}
		}
		// Run gives the same samples as RunPositioned.
		var viaRun []string
		if err := next.Run(context.Background(), func(s sample.Sample) error { viaRun = append(viaRun, describeSample(s)); return nil }); err != nil {
			t.Fatal(err)
		}
		if strings.Join(viaRun, "\n") != strings.Join(all[k+1:], "\n") {
			t.Fatalf("Run after sample %d differs", k)
		}
	}
	if seeks < 10 || rereads < 10 {
		t.Errorf("%d places by offset, %d by reading a shard again", seeks, rereads)
	}
	if !strings.Contains(strings.Join(all, "\n"), `"k3" "`) || !strings.Contains(strings.Join(all, "\n"), "appears again") {
		t.Errorf("no duplicate key caught:\n%s", strings.Join(all, "\n"))
	}
}

// TestResumeBadToken: a damaged or foreign token is an error wrapping sources.ErrPosition,
// never a panic; a sources wrapper says the same of a source that cannot seek.
func TestResumeBadToken(t *testing.T) {
	shards := resumeShards(t)
	src, err := New(shards, Options{})
	if err != nil {
		t.Fatal(err)
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	for _, bad := range []string{
		``, `{`, `null`, `[]`, `{"shard":0}`, `{"shard":-1,"path":` + q(shards[0]) + `}`,
		`{"shard":7,"path":"x"}`, `{"shard":8}`, `{"shard":1,"path":` + q(shards[0]) + `}`,
		`{"shard":0,"path":` + q(shards[0]) + `,"off":100,"n":1,"max":"a"}`,
		`{"shard":0,"path":` + q(shards[0]) + `,"off":512}`,
		`{"shard":0,"path":` + q(shards[0]) + `,"off":1048576,"n":1,"max":"a"}`,
		`{"shard":0,"path":` + q(shards[0]) + `,"max":"a"}`,
		`{"shard":0,"path":` + q(shards[0]) + `,"n":-1}`,
		`{"shard":0,"path":` + q(shards[0]) + `,"extra":1}`,
		`{"shard":0,"path":` + q(shards[0]) + `} {}`,
		`{"file":"a.jsonl","line":3}`,
		`{"shard":0,"path":` + q(shards[0]) + `,"off":512,"n":1,"max":"` + strings.Repeat("k", maxTokenKey+1) + `"}`,
	} {
		if _, err := src.Resume(0, []byte(bad)); !errors.Is(err, sources.ErrPosition) {
			t.Errorf("Resume(%.80s) = %v, want ErrPosition", bad, err)
		}
	}
	if _, err := sources.ResumeInner(struct{ sources.Source }{src}, 0, nil); !errors.Is(err, sources.ErrPosition) {
		t.Errorf("ResumeInner of a source without Resume: %v", err)
	}
}

// FuzzResume: any token is refused or gives a source whose run ends, without a panic.
func FuzzResume(f *testing.F) {
	f.Add([]byte(`{"shard":0,"path":"a.tar","off":1536,"n":1,"max":"a/000000"}`))
	f.Add([]byte(`{"shard":1,"path":"b.tar","n":2}`))
	f.Add([]byte(`{"shard":2}`))
	f.Add([]byte(`{"shard":0,"path":"a.tar","off":512,"n":1,"max":"zzz"}`))
	dir := f.TempDir()
	ms, _ := wdsShard(f, "a", 3)
	a := filepath.Join(dir, "a.tar")
	b := filepath.Join(dir, "b.tar")
	os.WriteFile(a, tarBytes(f, ms), 0o644)
	os.WriteFile(b, tarBytes(f, ms[:7]), 0o644)
	src, err := New([]string{a, b}, Options{Parallel: 2})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, tok []byte) {
		tok = []byte(strings.NewReplacer(`"a.tar"`, fmt.Sprintf("%q", a), `"b.tar"`, fmt.Sprintf("%q", b)).Replace(string(tok)))
		next, err := src.Resume(0, tok)
		if err != nil {
			if !errors.Is(err, sources.ErrPosition) {
				t.Fatalf("Resume(%q): %v, want ErrPosition", tok, err)
			}
			return
		}
		_ = next.Run(context.Background(), func(sample.Sample) error { return nil })
	})
}
