package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/faultproxy"
	"github.com/mldf/convert/internal/s3test"
	"github.com/mldf/convert/objstore"
)

// Inputs in a bucket (versitygw, a real S3 server): the same recipe gives the same bytes as
// with its inputs on disk, the read commands give the same answers, and a missing object,
// bucket or match, or refused credentials, is one error naming the URL.

// newBucket starts versitygw with a bucket "bkt", points the AWS chain at endpoint (the
// server's when ""), and returns a client.
func newBucket(t *testing.T) (*objstore.Client, *s3test.Server) {
	t.Helper()
	srv := s3test.Start(t)
	srv.MakeBucket(t, "bkt")
	s3test.Env(t, srv.Endpoint, s3test.SecretKey)
	c := objstore.New()
	t.Cleanup(func() { c.Close() })
	return c, srv
}

// upload copies the file or tree at local (relative to the repository root) to url.
func upload(t *testing.T, c *objstore.Client, local, url string) {
	t.Helper()
	if !filepath.IsAbs(local) {
		local = filepath.Join(repoRoot(t), local)
	}
	err := filepath.WalkDir(local, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(local, p)
		dst := url
		if rel != "." {
			dst = strings.TrimSuffix(url, "/") + "/" + filepath.ToSlash(rel)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return c.WriteFile(context.Background(), dst, b)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// convertWith writes a recipe (source block src, fields block fields) to a temporary folder,
// runs it and returns the output's bytes.
func convertWith(t *testing.T, src, fields string, extra ...string) []byte {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "out.mldf")
	rec := filepath.Join(dir, "recipe.yaml")
	y := rootPaths("source:\n" + src + "fields:\n" + fields + "output: " + out + "\n")
	if err := os.WriteFile(rec, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"run", rec, "--workers", "2"}, extra...)
	if _, stderr, err := run(t, args...); err != nil {
		t.Fatalf("run %s: %v\n%s\nrecipe:\n%s", rec, err, stderr, y)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type bucketCase struct {
	name          string
	local, bucket string // the source block with local paths, with URLs
	fields        string
	upload        [][2]string // local path → URL
}

var bucketCases = []bucketCase{
	{
		name:   "tar",
		local:  "  type: tar\n  inputs: [\"testdata/tar/wds/shard-{000000..000001}.tar\"]\n",
		bucket: "  type: tar\n  inputs: [\"s3://bkt/wds/shard-{000000..000001}.tar\"]\n",
		fields: "  - {name: image, type: image, from: jpg|jpeg|png|webp, mode: smart, max_resolution: 64}\n" +
			"  - {name: label, type: int, from: cls}\n  - {name: meta, type: json, from: json, required: false}\n",
		upload: [][2]string{{"testdata/tar/wds", "s3://bkt/wds"}},
	},
	{
		name:   "tar glob",
		local:  "  type: tar\n  inputs: [\"testdata/tar/wds/shard-*.tar\"]\n",
		bucket: "  type: tar\n  inputs: [\"s3://bkt/wds/shard-*.tar\"]\n",
		fields: "  - {name: image, type: image, from: jpg|jpeg|png|webp, mode: smart, max_resolution: 64}\n" +
			"  - {name: label, type: int, from: cls}\n  - {name: meta, type: json, from: json, required: false}\n",
		upload: [][2]string{{"testdata/tar/wds", "s3://bkt/wds"}},
	},
	{
		name:   "jsonl",
		local:  "  type: jsonl\n  inputs: [testdata/text/gsm8k_head8.jsonl, testdata/text/gsm8k_9to12.jsonl.zst]\n",
		bucket: "  type: jsonl\n  inputs: [\"s3://bkt/text/gsm8k_head8.jsonl\", \"s3://bkt/text/gsm8k_9to12.jsonl.zst\"]\n",
		fields: "  - {name: question, type: text}\n  - {name: answer, type: text}\n",
		upload: [][2]string{{"testdata/text", "s3://bkt/text"}},
	},
	{
		name:   "parquet",
		local:  "  type: parquet\n  inputs: [\"testdata/parquet/hf-images*.parquet\"]\n",
		bucket: "  type: parquet\n  inputs: [\"s3://bkt/pq/hf-images*.parquet\"]\n",
		fields: "  - {name: image, type: image, from: image, mode: smart, max_resolution: 64}\n  - {name: label, type: int}\n",
		upload: [][2]string{{"testdata/parquet", "s3://bkt/pq"}},
	},
	{
		name:   "images",
		local:  "  type: images\n  path: testdata/images\n",
		bucket: "  type: images\n  path: s3://bkt/images\n",
		fields: "  - {name: image, type: image, mode: smart, max_resolution: 64, jpeg_quality: 90}\n  - {name: label, type: int}\n",
		upload: [][2]string{{"testdata/images", "s3://bkt/images"}},
	},
	{
		name:   "audio folder",
		local:  "  type: audio_folder\n  path: testdata/audio/commands\n",
		bucket: "  type: audio_folder\n  path: s3://bkt/commands\n",
		fields: "  - {name: audio, type: audio, sample_rate: 16000, channels: mono, sample_type: int16, max_duration: 1.0, on_long: truncate}\n  - {name: label, type: int}\n",
		upload: [][2]string{{"testdata/audio/commands", "s3://bkt/commands"}},
	},
	{
		name:   "librispeech",
		local:  "  type: librispeech\n  path: testdata/audio/librispeech\n",
		bucket: "  type: librispeech\n  path: s3://bkt/ls\n",
		fields: "  - {name: audio, type: flac}\n  - {name: text, type: text}\n  - {name: speaker, type: int}\n  - {name: chapter, type: int}\n",
		upload: [][2]string{{"testdata/audio/librispeech", "s3://bkt/ls"}},
	},
	{
		name:   "nemo manifest",
		local:  "  type: nemo_manifest\n  path: testdata/audio/manifest/manifest.jsonl\n",
		bucket: "  type: nemo_manifest\n  path: s3://bkt/nemo/manifest.jsonl\n",
		fields: "  - {name: audio, type: audio, sample_rate: 16000, channels: mono, sample_type: int16}\n  - {name: text, type: text}\n  - {name: speaker, type: int}\n",
		upload: [][2]string{{"testdata/audio/manifest", "s3://bkt/nemo"}},
	},
	{
		name:   "images flat",
		local:  "  type: images\n  flat: true\n  path: testdata/images\n",
		bucket: "  type: images\n  flat: true\n  path: s3://bkt/images/\n",
		fields: "  - {name: image, type: image, mode: raw, max_resolution: 32}\n",
		upload: [][2]string{{"testdata/images", "s3://bkt/images"}},
	},
}

// TestBucketInputsSameBytes: each recipe gives byte-identical output from the bucket.
func TestBucketInputsSameBytes(t *testing.T) {
	c, _ := newBucket(t)
	uploaded := map[string]bool{}
	for _, tc := range bucketCases {
		t.Run(tc.name, func(t *testing.T) {
			for _, u := range tc.upload {
				if !uploaded[u[1]] {
					upload(t, c, u[0], u[1])
					uploaded[u[1]] = true
				}
			}
			want := convertWith(t, tc.local, tc.fields)
			got := convertWith(t, tc.bucket, tc.fields)
			if !bytes.Equal(got, want) {
				t.Fatalf("from the bucket: %d bytes, from disk: %d bytes, not identical", len(got), len(want))
			}
		})
	}
	t.Run("convert images URL", func(t *testing.T) {
		dir := t.TempDir()
		lo, ro := filepath.Join(dir, "l.mldf"), filepath.Join(dir, "r.mldf")
		if _, _, err := run(t, "images", "testdata/images", lo, "--workers", "2"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := run(t, "images", "s3://bkt/images", ro, "--workers", "2"); err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(lo)
		b, _ := os.ReadFile(ro)
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Fatalf("convert images from the bucket: %d bytes, from disk %d", len(b), len(a))
		}
	})
}

// TestBucketInputsThroughFaults: cut bodies, 503s, 500s and 429s on the way change nothing.
func TestBucketInputsThroughFaults(t *testing.T) {
	c, srv := newBucket(t)
	for _, tc := range bucketCases {
		for _, u := range tc.upload {
			upload(t, c, u[0], u[1])
		}
	}
	p, err := faultproxy.New(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	s3test.Env(t, p.URL, s3test.SecretKey)
	for _, tc := range []bucketCase{bucketCases[0], bucketCases[2], bucketCases[3], bucketCases[4]} {
		t.Run(tc.name, func(t *testing.T) {
			want := convertWith(t, tc.local, tc.fields)
			p.Reset()
			for _, r := range []faultproxy.Rule{
				{Name: "cut body", Match: faultproxy.IsGet, Fault: faultproxy.CutResponse, After: 1000, Times: 3},
				{Name: "cut at once", Match: faultproxy.IsGet, Fault: faultproxy.CutResponse, After: 0, Times: 2},
				{Name: "slowdown", Match: faultproxy.IsGet, Fault: faultproxy.Status, Status: 503, Code: "SlowDown", Times: 2},
				{Name: "503 head", Match: faultproxy.IsHead, Fault: faultproxy.Status, Status: 503, Code: "ServiceUnavailable", Times: 2},
				{Name: "500 list", Match: faultproxy.IsList, Fault: faultproxy.Status, Status: 500, Code: "InternalError", Times: 1},
				{Name: "429", Match: faultproxy.IsGet, Fault: faultproxy.Status, Status: 429, Code: "TooManyRequests", Times: 1},
			} {
				p.Add(r)
			}
			got := convertWith(t, tc.bucket, tc.fields)
			if !bytes.Equal(got, want) {
				t.Fatalf("through faults: %d bytes, from disk: %d bytes, not identical", len(got), len(want))
			}
			if p.Hits("cut body")+p.Hits("slowdown")+p.Hits("cut at once") == 0 {
				t.Fatal("no fault fired")
			}
		})
	}
}

// TestBucketReadCommands: inspect, verify (with --decode), cat, export and index of objects
// in the bucket answer as for the local files.
func TestBucketReadCommands(t *testing.T) {
	c, _ := newBucket(t)
	tc := bucketCases[0]
	local := filepath.Join(t.TempDir(), "w.mldf")
	if err := os.WriteFile(local, convertWith(t, tc.local, tc.fields), 0o644); err != nil {
		t.Fatal(err)
	}
	upload(t, c, local, "s3://bkt/out/w.mldf")
	const url = "s3://bkt/out/w.mldf"
	same := func(args ...string) {
		t.Helper()
		lo, _, lerr := run(t, append([]string{args[0], local}, args[1:]...)...)
		ro, _, rerr := run(t, append([]string{args[0], url}, args[1:]...)...)
		if lerr != nil || rerr != nil {
			t.Fatalf("%v: local %v, bucket %v", args, lerr, rerr)
		}
		if strings.ReplaceAll(ro, url, local) != lo {
			t.Fatalf("%v: from the bucket\n%s\nlocally\n%s", args, ro, lo)
		}
	}
	same("inspect")
	same("inspect", "--json")
	same("inspect", "--sample", "3")
	same("verify")
	same("verify", "--decode", "--workers", "2")
	same("cat", "--sample", "2", "--field", "image")
	same("cat", "--sample", "5", "--field", "label")

	// export: the directory stays local.
	for _, format := range []string{"folder", "webdataset", "parquet"} {
		ld, rd := t.TempDir(), t.TempDir()
		if _, _, err := run(t, "export", local, ld, "--format", format); err != nil {
			t.Fatal(err)
		}
		if _, _, err := run(t, "export", url, rd, "--format", format); err != nil {
			t.Fatal(err)
		}
		if a, b := treeBytes(t, ld), treeBytes(t, rd); a != b {
			t.Fatalf("export --format %s differs", format)
		}
	}

	// index: a shard in the bucket, its index beside it (no -o) and to a local path.
	upload(t, c, "testdata/tar/wds", "s3://bkt/wds")
	ldir := t.TempDir()
	lidx := filepath.Join(ldir, "l.taridx")
	if _, _, err := run(t, "index", "testdata/tar/wds/shard-000000.tar", "-o", lidx); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(lidx)
	if _, _, err := run(t, "index", "s3://bkt/wds/shard-000000.tar"); err != nil {
		t.Fatal(err)
	}
	r, err := c.Open(context.Background(), "s3://bkt/wds/shard-000000.taridx")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	got.ReadFrom(r)
	r.Close()
	if !bytes.Equal(got.Bytes(), want) || len(want) == 0 {
		t.Fatalf("index beside the shard in the bucket: %d bytes, local %d", got.Len(), len(want))
	}
	// inspect and verify of the index in the bucket.
	for _, args := range [][]string{{"inspect"}, {"inspect", "--json"}, {"inspect", "--sample", "2"}, {"verify"}} {
		const u = "s3://bkt/wds/shard-000000.taridx"
		lo, _, lerr := run(t, append([]string{args[0], lidx}, args[1:]...)...)
		ro, _, rerr := run(t, append([]string{args[0], u}, args[1:]...)...)
		if lerr != nil || rerr != nil || strings.ReplaceAll(ro, u, lidx) != lo {
			t.Fatalf("%v of the index: bucket %v\n%s\nlocal %v\n%s", args, rerr, ro, lerr, lo)
		}
	}
	ridx := filepath.Join(ldir, "r.taridx")
	if _, _, err := run(t, "index", "s3://bkt/wds/shard-{000000..000001}.tar", "-o", ridx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "index", "testdata/tar/wds/shard-{000000..000001}.tar", "-o", lidx); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(lidx)
	b, _ := os.ReadFile(ridx)
	if !bytes.Equal(a, b) {
		t.Fatal("index of two shards in the bucket differs from the local one")
	}
}

// treeBytes concatenates the names and contents of the files below dir.
func treeBytes(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, _ := os.ReadFile(p)
		b.WriteString(rel + "\x00" + string(data) + "\x00")
		return nil
	})
	return b.String()
}

// TestBucketInputErrors: one clear error naming the URL, exit status 1, no output.
func TestBucketInputErrors(t *testing.T) {
	c, srv := newBucket(t)
	upload(t, c, "testdata/tar/wds", "s3://bkt/wds")
	tarFields := bucketCases[0].fields
	check := func(t *testing.T, err error, kind error, url string) {
		t.Helper()
		if err == nil {
			t.Fatalf("no error, want %v naming %s", kind, url)
		}
		if !errors.Is(err, kind) || !strings.Contains(err.Error(), url) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("error %q: want one line, %v, naming %s", err, kind, url)
		}
		t.Logf("%v", err)
		if code := exitCode(err, false); code != exitError {
			t.Fatalf("exit status %d, want %d", code, exitError)
		}
	}
	runRecipe := func(t *testing.T, src string) error {
		dir := t.TempDir()
		out := filepath.Join(dir, "out.mldf")
		rec := filepath.Join(dir, "r.yaml")
		os.WriteFile(rec, []byte("source:\n"+src+"fields:\n"+tarFields+"output: "+out+"\n"), 0o644)
		_, _, err := run(t, "run", rec)
		if _, serr := os.Stat(out); serr == nil {
			t.Fatal("a failed run left an output")
		}
		return err
	}
	for _, cmd := range [][]string{{"inspect"}, {"verify"}, {"cat", "--sample", "0", "--field", "image"}, {"export", "", t.TempDir(), "--format", "folder"}} {
		for _, u := range []struct {
			url  string
			kind error
		}{{"s3://bkt/missing.mldf", objstore.ErrNotFound}, {"s3://nobucket/x.mldf", objstore.ErrNotFound}} {
			args := append([]string{cmd[0], u.url}, cmd[1:]...)
			if cmd[0] == "export" {
				args = []string{"export", u.url, cmd[2], "--format", "folder"}
			}
			_, _, err := run(t, args...)
			check(t, err, u.kind, u.url)
		}
	}
	_, _, err := run(t, "index", "s3://bkt/wds/none-*.tar", "-o", filepath.Join(t.TempDir(), "x.taridx"))
	check(t, err, objstore.ErrPattern, "s3://bkt/wds/none-*.tar")

	t.Run("recipe", func(t *testing.T) {
		for _, tc := range []struct {
			src, url string
			kind     error
		}{
			{"  type: tar\n  inputs: [\"s3://bkt/wds/none-*.tar\"]\n", "s3://bkt/wds/none-*.tar", objstore.ErrPattern},
			{"  type: tar\n  inputs: [\"s3://bkt/wds/shard-{000000..000002}.tar\"]\n", "s3://bkt/wds/shard-000002.tar", objstore.ErrNotFound},
			{"  type: tar\n  inputs: [\"s3://nobucket/shard-000000.tar\"]\n", "s3://nobucket/shard-000000.tar", objstore.ErrNotFound},
			{"  type: jsonl\n  inputs: [\"s3://bkt/missing.jsonl\"]\n", "s3://bkt/missing.jsonl", objstore.ErrNotFound},
			{"  type: parquet\n  inputs: [\"s3://bkt/pq/*.parquet\"]\n", "s3://bkt/pq/*.parquet", objstore.ErrPattern},
			{"  type: images\n  path: s3://bkt/noimages\n", "s3://bkt/noimages", errors.New("")},
			{"  type: images\n  path: s3://nobucket/images\n", "s3://nobucket/images/", objstore.ErrNotFound},
		} {
			err := runRecipe(t, tc.src)
			if tc.kind.Error() == "" { // not an objstore error: the message is checked
				if err == nil || !strings.Contains(err.Error(), tc.url) {
					t.Fatalf("%s: error %v does not name %s", tc.src, err, tc.url)
				}
				continue
			}
			check(t, err, tc.kind, tc.url)
		}
	})

	t.Run("validation", func(t *testing.T) {
		err := runRecipe(t, "  type: mtx10x\n  path: s3://bkt/mtx\n")
		if err == nil || !strings.Contains(err.Error(), "reads local files only") {
			t.Fatalf("an mtx10x source in a bucket: %v", err)
		}
		err = runRecipe(t, "  type: tar\n  inputs: [\"ftp://x/y.tar\"]\n")
		if err == nil || !strings.Contains(err.Error(), "ftp://x/y.tar") {
			t.Fatalf("a bad scheme: %v", err)
		}
	})

	t.Run("wrong secret", func(t *testing.T) {
		s3test.Env(t, srv.Endpoint, "not-the-secret")
		_, _, err := run(t, "inspect", "s3://bkt/wds/shard-000000.tar")
		check(t, err, objstore.ErrDenied, "s3://bkt/wds/shard-000000.tar")
		check(t, runRecipe(t, "  type: tar\n  inputs: [\"s3://bkt/wds/shard-000000.tar\"]\n"), objstore.ErrDenied, "s3://bkt/wds/shard-000000.tar")
		check(t, runRecipe(t, "  type: tar\n  inputs: [\"s3://bkt/wds/shard-*.tar\"]\n"), objstore.ErrDenied, "s3://bkt/wds/shard-*.tar")
	})
}

// TestBucketToBucketThroughFaults: a recipe reading its inputs from the bucket and writing its
// output, rejects and report to the bucket, through a proxy that cuts bodies (both ways),
// answers 503 SlowDown, 500 and 429 and loses a Complete's answer, gives the same bytes as the
// same recipe from and to the local disk; a Parquet source's class names go beside the object.
func TestBucketToBucketThroughFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an S3 server")
	}
	c, srv := newBucket(t)
	p, err := faultproxy.New(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	for _, tc := range []bucketCase{bucketCases[0], bucketCases[3]} { // tar, jsonl
		t.Run(tc.name, func(t *testing.T) {
			for _, u := range tc.upload {
				upload(t, c, u[0], u[1])
			}
			want := convertWith(t, tc.local, tc.fields)
			s3test.Env(t, p.URL, s3test.SecretKey)
			p.Reset()
			for _, r := range []faultproxy.Rule{
				{Name: "cut body", Match: faultproxy.IsGet, Fault: faultproxy.CutResponse, After: 1000, Times: 2},
				{Name: "slowdown", Match: faultproxy.IsGet, Fault: faultproxy.Status, Status: 503, Code: "SlowDown", Times: 1},
				{Name: "cut part", Match: faultproxy.IsUploadPart, Fault: faultproxy.CutRequest, After: 100, Times: 1},
				{Name: "500 part", Match: faultproxy.IsUploadPart, Fault: faultproxy.Status, Status: 500, Code: "InternalError", Times: 1},
				{Name: "429 put", Match: faultproxy.IsPut, Fault: faultproxy.Status, Status: 429, Code: "TooManyRequests", Times: 1},
				{Name: "lost complete", Match: faultproxy.IsComplete, Fault: faultproxy.CutResponse, After: 0, Times: 1},
			} {
				p.Add(r)
			}
			dir := t.TempDir()
			rec := filepath.Join(dir, "recipe.yaml")
			url := "s3://bkt/out/" + strings.ReplaceAll(tc.name, " ", "-") + ".mldf"
			y := "source:\n" + tc.bucket + "fields:\n" + tc.fields + "output: " + url + "\n"
			if err := os.WriteFile(rec, []byte(y), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, stderr, err := run(t, "run", rec, "--workers", "2"); err != nil {
				t.Fatalf("bucket to bucket: %v\n%s\nrecipe:\n%s", err, stderr, y)
			}
			got, err := os.ReadFile(filepath.Join(srv.Dir, "bkt", strings.TrimPrefix(url, "s3://bkt/")))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("bucket to bucket through faults: %d bytes, local: %d bytes, not identical", len(got), len(want))
			}
			if tc.name == "parquet" {
				r, err := mldf.FromBytes(url, got)
				if err != nil {
					t.Fatal(err)
				}
				if names, err := r.Field("label").ClassNames(); err != nil || len(names) == 0 {
					t.Fatalf("class names in %s: %v, %v", url, names, err)
				}
			}
			fired := 0
			for _, n := range []string{"cut body", "slowdown", "cut part", "500 part", "429 put", "lost complete"} {
				fired += p.Hits(n)
			}
			if p.Hits("cut body") == 0 || p.Hits("lost complete") == 0 {
				t.Fatalf("faults that fired: %d (cut body %d, lost complete %d)", fired, p.Hits("cut body"), p.Hits("lost complete"))
			}
			t.Logf("%d faults fired (cut part %d, 500 part %d, 429 put %d)", fired, p.Hits("cut part"), p.Hits("500 part"), p.Hits("429 put"))
		})
	}
}

// A damaged MLDF object (one signature byte changed) gives, from a bucket, the error its
// bytes give on disk: a bad signature, not "not readable from a bucket". A .beton object is
// the one kind the read commands refuse in a bucket.
func TestBucketReadDamagedSignature(t *testing.T) {
	c, _ := newBucket(t)
	tc := bucketCases[0]
	b := convertWith(t, tc.local, tc.fields)
	b[3] ^= 0x20
	local := filepath.Join(t.TempDir(), "d.mldf")
	if err := os.WriteFile(local, b, 0o644); err != nil {
		t.Fatal(err)
	}
	const url = "s3://bkt/d.mldf"
	upload(t, c, local, url)
	for _, cmd := range []string{"verify", "inspect"} {
		_, _, lerr := run(t, cmd, local)
		_, _, rerr := run(t, cmd, url)
		if lerr == nil || rerr == nil {
			t.Fatalf("%s: local %v, bucket %v", cmd, lerr, rerr)
		}
		if !errors.Is(rerr, mldf.ErrSignature) || errors.Is(rerr, errRemoteKind) ||
			strings.ReplaceAll(rerr.Error(), url, local) != lerr.Error() {
			t.Errorf("%s: from the bucket %q, on disk %q", cmd, rerr, lerr)
		}
	}
	upload(t, c, local, "s3://bkt/d.beton")
	if _, _, err := run(t, "inspect", "s3://bkt/d.beton"); !errors.Is(err, errRemoteKind) || !strings.Contains(err.Error(), "s3://bkt/d.beton") {
		t.Errorf("a .beton in a bucket: %v", err)
	}
}
