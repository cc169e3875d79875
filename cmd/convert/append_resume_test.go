package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mldf/convert/internal/appendfile"
	"github.com/mldf/convert/internal/atomicfile"
	"github.com/mldf/convert/objstore"
)

// appendResumeFiles makes a base of 200 JSONL lines and a recipe appending lines more in dir,
// and returns the base, its bytes, the recipe and the bytes of the uninterrupted append.
func appendResumeFiles(t *testing.T, dir string, lines int, appendOnce func(base, recipe string)) (base string, orig []byte, recipe string, want []byte) {
	t.Helper()
	write := func(name string, n, width int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "{\"text\": %q, \"n\": %d}\n", strings.Repeat("w", i%width), i)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, add := write("a.jsonl", 200, 40), write("b.jsonl", lines, 90)
	base = filepath.Join(dir, "base.mldf")
	recipeOf := func(name, in string) string {
		p := filepath.Join(dir, name)
		text := fmt.Sprintf("source:\n  type: jsonl\n  inputs: [%q]\nfields:\n  - name: text\n    type: text\n  - name: n\n    type: int\noutput: %q\npage_size: 4096\n", in, base)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if _, _, err := run(t, "run", recipeOf("base.yaml", a)); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	recipe = recipeOf("add.yaml", add)
	appendOnce(base, recipe)
	if want, err = os.ReadFile(base); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	return base, orig, recipe, want
}

// fingerprintOf is the appendfile.Fingerprint of the file at path.
func fingerprintOf(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	fp, err := appendfile.FingerprintAt(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// TestAppendResumeRecord: what a killed append left in its working folder decides the next
// append: a base that is the killed append's result is left alone (the kill came after the
// publication), a changed base or recipe starts over, --restart discards the folder, and a
// second append to the same base while one runs is refused. Each ends with the base of one
// append, and no working folder.
func TestAppendResumeRecord(t *testing.T) {
	dir := t.TempDir()
	base, orig, recipe, want := appendResumeFiles(t, dir, 3000, func(base, recipe string) {
		if _, _, err := run(t, "append", base, recipe); err != nil {
			t.Fatal(err)
		}
	})
	work := filepath.Join(dir, ".base.mldf.append-resume")
	origFP, wantFP := fingerprintOf(t, base), ""
	os.WriteFile(base, want, 0o644)
	wantFP = fingerprintOf(t, base)
	os.WriteFile(base, orig, 0o644)
	junk := []byte("not an MLDF file")
	cases := []struct {
		name      string
		state     *appendfile.State
		newFile   []byte // a file of new samples left by the killed append
		base      []byte // the base at the restart
		args      []string
		says      string // on stderr
		holdLock  bool
		wantError string
	}{
		{name: "published before the clean-up", state: &appendfile.State{Base: base, BaseFingerprint: origFP, Delta: "d", Result: wantFP},
			base: want, says: "nothing more to append"},
		{name: "base changed", state: &appendfile.State{Base: base, BaseFingerprint: "1:00", Delta: "d"}, newFile: junk,
			base: orig, says: "the base changed since the killed append"},
		{name: "recipe changed", state: &appendfile.State{Base: base, BaseFingerprint: origFP, Delta: "another recipe"}, newFile: junk,
			base: orig, says: "converting the new samples again: the recipe"},
		{name: "killed before the publication", state: &appendfile.State{Base: base, BaseFingerprint: origFP, Result: wantFP},
			base: orig},
		{name: "restart", state: &appendfile.State{Base: base, BaseFingerprint: origFP, Delta: "d"}, newFile: junk,
			base: orig, args: []string{"--restart"}},
		{name: "no record", newFile: junk, base: orig},
		{name: "damaged record", newFile: junk, base: orig, args: []string{"--restart"}},
		{name: "another append runs", state: &appendfile.State{Base: base, BaseFingerprint: origFP}, base: orig, holdLock: true,
			wantError: "another append to this base is running"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(base, c.base, 0o644); err != nil {
				t.Fatal(err)
			}
			os.RemoveAll(work)
			os.MkdirAll(work, 0o700)
			if c.state != nil {
				b := fmt.Sprintf(`{"base": %q, "base_fingerprint": %q, "delta": %q, "result": %q}`, c.state.Base, c.state.BaseFingerprint, c.state.Delta, c.state.Result)
				os.WriteFile(filepath.Join(work, "append.json"), []byte(b), 0o600)
			} else if c.name == "damaged record" {
				os.WriteFile(filepath.Join(work, "append.json"), []byte(`{"base":`), 0o600)
			}
			if c.newFile != nil {
				os.WriteFile(filepath.Join(work, "new.mldf"), c.newFile, 0o644)
			}
			if c.holdLock {
				f, err := atomicfile.OpenLocked(filepath.Join(work, "lock"), 0o600, false)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
			}
			_, stderr, err := run(t, append([]string{"append", base, recipe}, c.args...)...)
			got, _ := os.ReadFile(base)
			if c.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantError) {
					t.Fatalf("err %v, want %q", err, c.wantError)
				}
				if !bytes.Equal(got, c.base) {
					t.Fatal("the refused append changed the base")
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			if !strings.Contains(stderr, c.says) {
				t.Errorf("stderr %q does not say %q", stderr, c.says)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the base is %d bytes, not the %d of one append", len(got), len(want))
			}
			if _, err := os.Stat(work); err == nil {
				t.Error("the working folder is left")
			}
		})
	}
}

// TestKill9AppendResumes: convert append killed with SIGKILL while it converts the new samples
// (after its first checkpoint, twice) and while it appends them (once they are converted),
// then started again: each restart continues where the killed one stopped (from the
// checkpoint; without converting again), BASE stays as it was until the last append, which
// ends with the bytes of an uninterrupted append.
func TestKill9AppendResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	t0 := time.Now()
	bin := buildConvert(t, dir)
	t.Logf("binary: %v", time.Since(t0))
	lines := 150000
	appendCmd := func(base, recipe string) *exec.Cmd {
		return exec.Command(bin, "append", base, recipe, "--checkpoint-every", "50ms", "--workers", "2")
	}
	base, orig, recipe, want := appendResumeFiles(t, dir, lines, func(base, recipe string) {
		if b, err := appendCmd(base, recipe).CombinedOutput(); err != nil {
			t.Fatalf("uninterrupted append: %v\n%s", err, b)
		}
	})
	t.Logf("files and the uninterrupted append: %v", time.Since(t0))
	// killAt runs an append and kills it at the first output line that holds at; it returns
	// the output, and whether it was killed (else it finished).
	killAt := func(at string) (string, bool) {
		cmd := appendCmd(base, recipe)
		pr, pw := io.Pipe()
		cmd.Stdout, cmd.Stderr = pw, pw
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		done := make(chan bool)
		go func() {
			killed := false
			sc := bufio.NewScanner(pr)
			for sc.Scan() {
				out.WriteString(sc.Text() + "\n")
				if !killed && at != "" && strings.Contains(sc.Text(), at) {
					cmd.Process.Kill() // SIGKILL
					killed = true
				}
			}
			done <- killed
		}()
		err := cmd.Wait()
		pw.Close()
		killed := <-done
		if err != nil && !killed {
			t.Fatalf("append: %v\n%s", err, out.String())
		}
		return out.String(), killed && err != nil
	}
	steps := []struct{ killAt, says string }{
		{"convert: checkpoint ", ""},
		{"convert: checkpoint ", "resumed at sample"},
		{"wrote ", "resumed at sample"},
		{"", "had converted the new samples"},
	}
	for i, s := range steps {
		out, killed := killAt(s.killAt)
		if !strings.Contains(out, s.says) {
			t.Fatalf("append %d does not say %q:\n%s", i, s.says, out)
		}
		got, _ := os.ReadFile(base)
		if killed {
			if !bytes.Equal(got, orig) {
				t.Fatalf("append %d killed at %q changed BASE", i, s.killAt)
			}
			continue
		}
		if s.killAt != "" {
			t.Logf("append %d finished before its kill at %q", i, s.killAt)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("the resumed append: BASE is %d bytes; the uninterrupted append's %d; they differ", len(got), len(want))
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".base.mldf*")); len(left) != 0 {
			t.Fatalf("left behind: %v", left)
		}
		return
	}
	t.Fatal("the last append did not finish")
}

// TestAppendResumeInBucket: an append to a base in a bucket keeps its working folder in the
// local state directory; a killed append's record there that names its unfinished upload
// makes the next append abort that upload before it builds the result again, which equals
// the local append.
func TestAppendResumeInBucket(t *testing.T) {
	srv := startS3(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	base, orig, recipe, want := appendResumeFiles(t, dir, 500, func(base, recipe string) {
		if _, _, err := run(t, "append", base, recipe); err != nil {
			t.Fatal(err)
		}
	})
	ctx := context.Background()
	c := objstore.New()
	defer c.Close()
	url := "s3://bkt/data/base.mldf"
	if err := c.WriteFile(ctx, url, orig); err != nil {
		t.Fatal(err)
	}
	up, err := c.NewUpload(ctx, url) // the killed append's
	if err != nil {
		t.Fatal(err)
	}
	state, err := stateDir(url)
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(filepath.Dir(state), ".base.mldf.append-resume")
	os.MkdirAll(work, 0o700)
	rec := fmt.Sprintf(`{"base": %q, "base_fingerprint": %q, "upload": %q}`, url, fingerprintOf(t, base), up.ID())
	if err := os.WriteFile(filepath.Join(work, "append.json"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := run(t, "append", url, recipe); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if got := object(t, srv, "data/base.mldf"); !bytes.Equal(got, want) {
		t.Fatalf("the bucket append: %d bytes; the local one: %d bytes; they differ", len(got), len(want))
	}
	left, err := c.ListIncomplete(ctx, "s3://bkt/data/")
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("incomplete uploads left: %v", left)
	}
	if _, err := os.Stat(filepath.Dir(work)); err == nil {
		t.Error("the state directory's folder of the base is left")
	}
}
