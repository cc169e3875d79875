//go:build !race

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"

	"github.com/mldf/convert/internal/aztest"
	"github.com/mldf/convert/objstore"
)

// A run to a bucket killed after some of its parts were uploaded resumes the upload: the
// restarted run lists the parts, keeps them and uploads only the rest, and the object is the
// bytes of a local uninterrupted run. An upload aborted meanwhile (a lifecycle rule) starts
// the run over, saying so. Parts of 5 MiB keep it cheap (300k lines, ~76 MB out). Each
// scheme runs against its emulator: s3:// versitygw, gs:// fake-gcs-server (in this
// process, reached through STORAGE_EMULATOR_HOST), az:// Azurite; a scheme whose emulator
// is not installed is skipped. Left out of the race pass (it builds the binary).

var uploadCkLine = regexp.MustCompile(`checkpoint \d+ at sample \d+ \(upload: (\d+) parts, (\d+) bytes uploaded\)`)
var resumedUpload = regexp.MustCompile(`resumed at sample \d+ .*the upload after its (\d+) uploaded parts`)

func TestResumeBucketUpload(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts the storage emulators")
	}
	dir := t.TempDir()
	bin := buildConvert(t, dir)
	jsonl := filepath.Join(dir, "lines.jsonl")
	writeWideJSONL(t, jsonl, 300_000)
	recipe := filepath.Join(dir, "lines.yaml")
	text := fmt.Sprintf("source:\n  type: jsonl\n  inputs: [%q]\nfields:\n  - {name: n, type: int}\n  - {name: t, type: text}\noutput: out.mldf\nrejects: %q\n",
		jsonl, filepath.Join(dir, "rejects.jsonl"))
	if err := os.WriteFile(recipe, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(dir, "ref.mldf")
	if b, err := exec.Command(bin, "run", recipe, "--output", ref, "--checkpoint-every", "0").CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, b)
	}
	want, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, scheme := range []string{"s3", "gs", "az"} {
		t.Run(scheme, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", filepath.Join(t.TempDir(), "cache"))
			t.Setenv(partSizeEnv, "5MiB") // S3's (and versitygw's) smallest
			switch scheme {
			case "s3":
				startS3(t)
			case "gs":
				startGCS(t)
			case "az":
				srv := aztest.Start(t)
				srv.MakeContainer(t, "bkt")
				srv.Env(t)
			}
			resumeBucketCheck(t, bin, recipe, scheme+"://bkt/", want)
		})
	}
}

// startGCS starts fake-gcs-server in this process with a bucket "bkt" and points the
// binary's GCS client at it.
func startGCS(t *testing.T) {
	t.Helper()
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", Port: 0})
	if err != nil {
		t.Skipf("fake-gcs-server does not start: %v", err)
	}
	t.Cleanup(srv.Stop)
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: "bkt"})
	t.Setenv("STORAGE_EMULATOR_HOST", strings.TrimPrefix(srv.URL(), "http://"))
}

// bucketObject returns the object at url, or nil and false when there is none.
func bucketObject(t *testing.T, url string) ([]byte, bool) {
	t.Helper()
	c := objstore.New()
	defer c.Close()
	b, err := c.ReadFile(context.Background(), url, 1<<30)
	if errors.Is(err, objstore.ErrNotFound) {
		return nil, false
	}
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return b, true
}

// resumeBucketCheck kills a run to base+key once a checkpoint counts an uploaded part and
// runs it again: resumed, and with the upload aborted between the runs.
func resumeBucketCheck(t *testing.T, bin, recipe, base string, want []byte) {
	const part = 5 << 20
	whole := (len(want) + part - 1) / part
	for _, tc := range []struct {
		name  string
		abort bool // the upload is aborted between the kill and the restart
	}{{"resume", false}, {"upload-gone", true}} {
		t.Run(tc.name, func(t *testing.T) {
			url := base + "out-" + tc.name + ".mldf"
			args := []string{"run", recipe, "--output", url, "--checkpoint-every", "20ms", "--checkpoint-bytes", "2MiB"}
			// The first run: killed once a checkpoint has an uploaded part (not 2: Azurite is
			// slow enough that the conversion may end before its second part).
			cmd := exec.Command(bin, args...)
			pipe, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var log strings.Builder
			killed := 0
			sc := bufio.NewScanner(pipe)
			for sc.Scan() {
				log.WriteString(sc.Text() + "\n")
				if m := uploadCkLine.FindStringSubmatch(sc.Text()); m != nil && killed == 0 {
					if n, _ := strconv.Atoi(m[1]); n >= 1 {
						cmd.Process.Kill()
						killed = n
					}
				}
			}
			cmd.Wait()
			if killed == 0 {
				t.Fatalf("the run ended before a checkpoint with an uploaded part:\n%s", log.String())
			}
			if _, ok := bucketObject(t, url); ok {
				t.Fatalf("an object at %s after the kill", url)
			}
			if tc.abort {
				if b, err := exec.Command(bin, "storage", "abort-incomplete", url).CombinedOutput(); err != nil {
					t.Fatalf("abort-incomplete: %v\n%s", err, b)
				}
			}
			var stderr bytes.Buffer
			again := exec.Command(bin, args...)
			again.Stderr = &stderr
			if err := again.Run(); err != nil {
				t.Fatalf("restarted run: %v\n%s", err, stderr.String())
			}
			if got, _ := bucketObject(t, url); !bytes.Equal(got, want) {
				t.Fatalf("the object (%d bytes) differs from the uninterrupted run's (%d bytes)", len(got), len(want))
			}
			m := resumedUpload.FindStringSubmatch(stderr.String())
			if tc.abort {
				if m != nil || !strings.Contains(stderr.String(), "starting over: the upload of the checkpoint cannot be continued") {
					t.Fatalf("the restarted run did not start over saying why:\n%s", stderr.String())
				}
				t.Logf("killed after %d parts, the upload aborted; started over:\n%s", killed, stderr.String())
				return
			}
			if m == nil {
				t.Fatalf("the restarted run did not resume the upload:\n%s", stderr.String())
			}
			// The killed run may write one more checkpoint between the line read here and the
			// kill, so the restart keeps at least the parts that line counted, never fewer, and
			// never more than the object has.
			kept, _ := strconv.Atoi(m[1])
			if kept < killed || kept > whole {
				t.Fatalf("the restarted run kept %d parts; the killed run had %d at the checkpoint seen, the object has %d", kept, killed, whole)
			}
			t.Logf("killed after %d uploaded parts; the restarted run kept %d and uploaded %d of %d", killed, kept, whole-kept, whole)
			if entries, _ := os.ReadDir(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "convert", "resume")); len(entries) != 0 {
				t.Errorf("the state directory holds %d entries after the finished run", len(entries))
			}
		})
	}
}

// writeWideJSONL writes n lines {"n": i, "t": "..."} of about 200 distinct bytes each.
func writeWideJSONL(t *testing.T, path string, n int) {
	t.Helper()
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "{\"n\":%d,\"t\":\"%0200d\"}\n", i, i*7919)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
