package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/s3test"
	"github.com/mldf/convert/merge"
	"github.com/mldf/convert/objstore"
)

// startS3 starts versitygw with a bucket "bkt", points the AWS chain at it and returns it.
func startS3(t *testing.T) *s3test.Server {
	t.Helper()
	srv := s3test.Start(t)
	srv.MakeBucket(t, "bkt")
	s3test.Env(t, srv.Endpoint, s3test.SecretKey)
	return srv
}

// object returns the bytes of s3://bkt/key as stored by versitygw (its posix backend keeps
// one file per object), failing the test when it is missing.
func object(t *testing.T, srv *s3test.Server, key string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(srv.Dir, "bkt", key))
	if err != nil {
		t.Fatalf("object s3://bkt/%s: %v", key, err)
	}
	return b
}

func noObject(t *testing.T, srv *s3test.Server, key string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(srv.Dir, "bkt", key)); err == nil {
		t.Errorf("object s3://bkt/%s exists, want none", key)
	}
}

// genJSONL writes n lines of random text (about 700 bytes each, so that 30000 lines span
// several 16 MiB upload parts); line bad (if ≥ 0) is malformed.
func genJSONL(t *testing.T, path string, n, bad int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 5))
	var b bytes.Buffer
	const letters = "abcdefghijklmnopqrstuvwxyz     "
	for i := range n {
		if i == bad {
			b.WriteString("{not json\n")
			continue
		}
		text := make([]byte, 200+rng.IntN(1000))
		for j := range text {
			text[j] = letters[rng.IntN(len(letters))]
		}
		line, _ := json.Marshal(map[string]any{"id": i, "text": string(text)})
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// jsonlRecipe writes a recipe converting in (JSONL) with the given output lines.
func jsonlRecipe(t *testing.T, dir, in string) string {
	t.Helper()
	r := fmt.Sprintf(`source:
  type: jsonl
  inputs: [%q]
fields:
  - name: text
    type: text
  - name: id
    type: int
output: unused.mldf
max_errors: 10
`, in)
	p := filepath.Join(dir, "recipe.yaml")
	if err := os.WriteFile(p, []byte(r), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBucketOutputSameBytes converts the same JSONL (MLDF) and image folder (.beton) to a
// local file and to s3://: the object holds exactly the local file's bytes, and the report
// and rejects go to the bucket too.
func TestBucketOutputSameBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an S3 server")
	}
	srv := startS3(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	genJSONL(t, in, 30000, 77)
	rec := jsonlRecipe(t, dir, in)
	local := filepath.Join(dir, "local.mldf")
	if _, stderr, err := run(t, "run", rec, "--output", local); err != nil {
		t.Fatalf("local run: %v\n%s", err, stderr)
	}
	url := "s3://bkt/out/train.mldf"
	stdout, stderr, err := run(t, "run", rec, "--output", url, "--workers", "3")
	if err != nil {
		t.Fatalf("bucket run: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "wrote "+url) {
		t.Errorf("summary does not name the URL:\n%s", stdout)
	}
	want, _ := os.ReadFile(local)
	got := object(t, srv, "out/train.mldf")
	if len(want) < 20<<20 || !bytes.Equal(got, want) {
		t.Fatalf("object (%d bytes) differs from the local file (%d bytes)", len(got), len(want))
	}
	rejects := object(t, srv, "out/train.mldf.rejects.jsonl")
	if wantRej, _ := os.ReadFile(local + ".rejects.jsonl"); !bytes.Equal(rejects, wantRej) || len(rejects) == 0 {
		t.Errorf("rejects object %q, local %q", rejects, wantRej)
	}
	var rep runReport
	if err := json.Unmarshal(object(t, srv, "out/train.mldf.report.json"), &rep); err != nil || !rep.OK || rep.Output != url || rep.NumRejected != 1 {
		t.Errorf("report: %+v (%v)", rep, err)
	}

	// .beton from an image folder.
	imgs := filepath.Join(dir, "imgs")
	genImageFolder(t, imgs, 3, 300, 64)
	bl := filepath.Join(dir, "local.beton")
	args := []string{"images", imgs, "", "--format", "beton", "--mode", "raw", "--page-size", "2MiB"}
	args[2] = bl
	if _, stderr, err := run(t, args...); err != nil {
		t.Fatalf("local beton: %v\n%s", err, stderr)
	}
	args[2] = "s3://bkt/out/train.beton"
	if _, stderr, err := run(t, args...); err != nil {
		t.Fatalf("bucket beton: %v\n%s", err, stderr)
	}
	want, _ = os.ReadFile(bl)
	if got := object(t, srv, "out/train.beton"); len(want) < 10<<20 || !bytes.Equal(got, want) {
		t.Fatalf(".beton object (%d bytes) differs from the local file (%d bytes)", len(got), len(want))
	}
	// No leftovers: the uploads completed, none is pending.
	c := objstore.New()
	defer c.Close()
	if inc, err := c.ListIncomplete(context.Background(), "s3://bkt/"); err != nil || len(inc) != 0 {
		t.Errorf("incomplete uploads left: %v %v", inc, err)
	}
}

// TestBucketOutputRefusedUpFront: a missing bucket or a wrong secret fails before any work
// with one error naming the URL, and nothing is written; an output equal to an input URL is
// refused by the alias check.
func TestBucketOutputRefusedUpFront(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an S3 server")
	}
	srv := startS3(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	genJSONL(t, in, 10, -1)
	rec := jsonlRecipe(t, dir, in)
	_, _, err := run(t, "run", rec, "--output", "s3://nobucket/x.mldf")
	var oe *objstore.Error
	if !errors.Is(err, objstore.ErrNotFound) || !errors.As(err, &oe) || !strings.Contains(err.Error(), "s3://nobucket/x.mldf") {
		t.Errorf("missing bucket: %v", err)
	}
	s3test.Env(t, srv.Endpoint, "wrong-secret")
	_, _, err = run(t, "run", rec, "--output", "s3://bkt/x.mldf")
	if !errors.Is(err, objstore.ErrDenied) || !strings.Contains(err.Error(), "s3://bkt/x.mldf") {
		t.Errorf("wrong secret: %v", err)
	}
	noObject(t, srv, "x.mldf")
	noObject(t, srv, "x.mldf.report.json")
	_, _, err = run(t, "run", rec, "--output", "s3://bkt/x.mldf", "--report", "s3://bkt/x.mldf")
	if err == nil || !strings.Contains(err.Error(), "would be overwritten") {
		t.Errorf("report = output: %v", err)
	}
}

// TestBucketShardedRunAndMerge runs 4 tasks writing their parts and .done records to the
// bucket, re-runs one (nothing to do), merges in the bucket (parts found by listing, data
// regions copied server-side) and compares with the same sharded run and merge on local disk:
// the objects hold the same bytes, and the merged object verifies.
func TestBucketShardedRunAndMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an S3 server")
	}
	srv := startS3(t)
	dir := t.TempDir()
	var ins []string
	for i, n := range []int{12000, 100, 12000, 9000} {
		in := filepath.Join(dir, fmt.Sprintf("in%d.jsonl", i))
		genJSONL(t, in, n, -1)
		ins = append(ins, in)
	}
	rec := filepath.Join(dir, "recipe.yaml")
	r := fmt.Sprintf("source:\n  type: jsonl\n  inputs: [%q, %q, %q, %q]\nfields:\n  - name: text\n    type: text\n  - name: id\n    type: int\noutput: unused.mldf\n",
		ins[0], ins[1], ins[2], ins[3])
	if err := os.WriteFile(rec, []byte(r), 0o644); err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(dir, "local", "train.mldf")
	url := "s3://bkt/ds/train.mldf"
	for i := range 4 {
		for _, out := range []string{local, url} {
			if _, stderr, err := run(t, "run", rec, "--output", out, "--shard", fmt.Sprint(i), "--shards", "4"); err != nil {
				t.Fatalf("task %d to %s: %v\n%s", i, out, err, stderr)
			}
		}
	}
	for i := range 4 {
		part := fmt.Sprintf("ds/train.part-%05d-of-00004.mldf", i)
		lp := filepath.Join(dir, "local", fmt.Sprintf("train.part-%05d-of-00004.mldf", i))
		if want, _ := os.ReadFile(lp); !bytes.Equal(object(t, srv, part), want) {
			t.Errorf("part %d differs from the local part", i)
		}
		object(t, srv, part+".done")
		object(t, srv, part+".report.json")
	}
	stdout, _, err := run(t, "run", rec, "--output", url, "--shard", "2", "--shards", "4")
	if err != nil || !strings.Contains(stdout, "up to date") {
		t.Errorf("re-run of a finished task: %v\n%s", err, stdout)
	}
	if _, stderr, err := run(t, "merge", local); err != nil {
		t.Fatalf("local merge: %v\n%s", err, stderr)
	}
	stdout, stderr, err := run(t, "merge", url)
	if err != nil {
		t.Fatalf("bucket merge: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "server-side copy") {
		t.Errorf("merge summary does not say server-side copy:\n%s", stdout)
	}
	want, _ := os.ReadFile(local)
	got := object(t, srv, "ds/train.mldf")
	if len(want) < 10<<20 || !bytes.Equal(got, want) {
		t.Fatalf("merged object (%d bytes) differs from the local merge (%d bytes)", len(got), len(want))
	}
	if _, err := mldf.Verify(filepath.Join(srv.Dir, "bkt", "ds", "train.mldf")); err != nil {
		t.Errorf("merged object does not verify: %v", err)
	}
	// Local parts merged into a bucket: their data is uploaded, the bytes are the same.
	localParts, _ := filepath.Glob(filepath.Join(dir, "local", "train.part-*-of-00004.mldf"))
	if _, stderr, err := run(t, append([]string{"merge", "s3://bkt/fromlocal.mldf"}, localParts...)...); err != nil {
		t.Fatalf("merge of local parts into the bucket: %v\n%s", err, stderr)
	}
	if got := object(t, srv, "fromlocal.mldf"); !bytes.Equal(got, want) {
		t.Errorf("merge of local parts into the bucket: %d bytes, differs from the local merge", len(got))
	}
	// Parts in a bucket are not merged into a local file; an explicit payload check is refused.
	var bucketParts []string
	for i := range 4 {
		bucketParts = append(bucketParts, fmt.Sprintf("s3://bkt/ds/train.part-%05d-of-00004.mldf", i))
	}
	if _, _, err := run(t, append([]string{"merge", filepath.Join(dir, "x.mldf")}, bucketParts...)...); !errors.Is(err, merge.ErrUnsupported) {
		t.Errorf("bucket parts merged into a local file: %v", err)
	}
	if _, _, err := run(t, append([]string{"merge", "s3://bkt/ds/again.mldf", "--check-parts"}, bucketParts...)...); !errors.Is(err, merge.ErrUnsupported) {
		t.Errorf("--check-parts for a bucket merge: %v", err)
	}
	noObject(t, srv, "ds/again.mldf")
	// The parts' samples, in order, are the single-machine run's.
	single := filepath.Join(dir, "single.mldf")
	if _, stderr, err := run(t, "run", rec, "--output", single); err != nil {
		t.Fatalf("single run: %v\n%s", err, stderr)
	}
	a, b := contentDigests(t, single), contentDigests(t, filepath.Join(srv.Dir, "bkt", "ds", "train.mldf"))
	if len(a) != len(b) || len(a) != 33100 {
		t.Fatalf("%d samples merged, %d single", len(b), len(a))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("sample %d differs from the single-machine run", i)
		}
	}
}

// waitIncomplete polls until an incomplete upload to url is listed.
func waitIncomplete(t *testing.T, c *objstore.Client, url string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		inc, err := c.ListIncomplete(context.Background(), url)
		if err == nil && len(inc) > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no upload to %s started", url)
}

// A SIGKILLed run leaves no object, only an incomplete upload, which `convert storage
// ls-incomplete` lists and the next run to the key aborts; SIGTERM and SIGINT abort the
// upload themselves.
func TestBucketKilledRunLeavesNoObject(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts an S3 server")
	}
	srv := startS3(t)
	dir := t.TempDir()
	bin := buildConvert(t, dir)
	data := filepath.Join(dir, "data")
	writeNoiseFolder(t, data, 300, 256)
	c := objstore.New()
	defer c.Close()
	ctx := context.Background()
	const url = "s3://bkt/run/x.mldf"
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "images", data, url, "--mode", "png", "--workers", "1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitIncomplete(t, c, url)
		time.Sleep(300 * time.Millisecond)
		return cmd
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := start()
		cmd.Process.Signal(sig)
		if err := cmd.Wait(); err == nil {
			t.Fatalf("%v: the run succeeded", sig)
		}
		noObject(t, srv, "run/x.mldf")
		if inc, err := c.ListIncomplete(ctx, url); err != nil || len(inc) != 0 {
			t.Errorf("%v: the upload was not aborted: %v %v", sig, inc, err)
		}
	}
	cmd := start()
	cmd.Process.Kill()
	cmd.Wait()
	noObject(t, srv, "run/x.mldf")
	noObject(t, srv, "run/x.mldf.report.json")
	stdout, _, err := run(t, "storage", "ls-incomplete", "s3://bkt/run/")
	if err != nil || !strings.Contains(stdout, url) || !strings.Contains(stdout, "1 incomplete uploads") {
		t.Fatalf("ls-incomplete after kill -9: %v\n%s", err, stdout)
	}
	if _, stderr, err := run(t, "images", data, url, "--mode", "png"); err != nil {
		t.Fatalf("next run: %v\n%s", err, stderr)
	}
	if inc, err := c.ListIncomplete(ctx, url); err != nil || len(inc) != 0 {
		t.Errorf("the next run did not abort the killed run's upload: %v %v", inc, err)
	}
	if _, err := mldf.Verify(filepath.Join(srv.Dir, "bkt", "run", "x.mldf")); err != nil {
		t.Errorf("the next run's object does not verify: %v", err)
	}
	// abort-incomplete: a killed run's upload again, removed by the command.
	cmd = start()
	cmd.Process.Kill()
	cmd.Wait()
	stdout, _, err = run(t, "storage", "abort-incomplete", url)
	if err != nil || !strings.Contains(stdout, "aborted 1 ") {
		t.Errorf("abort-incomplete: %v\n%s", err, stdout)
	}
	if inc, err := c.ListIncomplete(ctx, url); err != nil || len(inc) != 0 {
		t.Errorf("abort-incomplete left %v %v", inc, err)
	}
}

// Outputs that are more than one object are refused for a bucket before any work: a SCDL
// folder, a Parquet source's class-names file.
func TestBucketOutputMultiFileRefused(t *testing.T) {
	_, _, err := run(t, "run", "configs/tenx-scdl.yaml", "--output", "s3://nobucket/x") // pure Go: also in the CGO_ENABLED=0 pass
	if err == nil || !strings.Contains(err.Error(), "folder") {
		t.Errorf("scdl to a bucket: %v", err)
	}
}

// TestMalformedOutputURLRefused: an output, report or rejects URL that objstore refuses as an
// input (a ../ segment, no bucket, the __0x sequence, a key over 1024 bytes, an unknown
// scheme) is refused by validate and run, naming it; it is never a local relative path (run
// once created ./s3:/bkt and wrote ./s3:/bkt/x.mldf).
func TestMalformedOutputURLRefused(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	genJSONL(t, in, 10, -1)
	rec := jsonlRecipe(t, dir, in)
	for _, scheme := range []string{"s3:", "gs:", "http:"} {
		if _, err := os.Lstat(filepath.Join(repoRoot(t), scheme)); err == nil {
			t.Fatalf("%s exists in the repository root before the test", scheme)
		}
		t.Cleanup(func() { os.RemoveAll(filepath.Join(repoRoot(t), scheme)) })
	}
	for _, bad := range []string{"s3://bkt/a/../x.mldf", "s3:///x.mldf", "s3://bkt/x__0x41.mldf",
		"s3://bkt/" + strings.Repeat("k", 1025) + ".mldf", "gs://bkt/a/../x.mldf", "http://host/x.mldf"} {
		for _, flag := range []string{"--output", "--report", "--rejects"} {
			for _, cmd := range []string{"validate", "run"} {
				args := []string{cmd, rec, flag, bad}
				if flag != "--output" {
					args = append(args, "--output", filepath.Join(dir, "out.mldf"))
				}
				_, _, err := run(t, args...)
				if !errors.Is(err, objstore.ErrBadURL) {
					t.Errorf("%s %s %.40s: %v, want a bad URL", cmd, flag, bad, err)
				}
			}
		}
	}
	for _, scheme := range []string{"s3:", "gs:", "http:"} {
		if _, err := os.Lstat(filepath.Join(repoRoot(t), scheme)); err == nil {
			t.Errorf("a run created the local directory %s", scheme)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out.mldf")); err == nil {
		t.Error("an output was written")
	}
}
