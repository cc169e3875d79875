package main

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/recipe"
)

// The recipe keys checkpoint_every and checkpoint_bytes set a run's checkpoints; the flags,
// when given, override them.
func TestCheckpointKeysAndFlags(t *testing.T) {
	for _, c := range []struct {
		name      string
		every     string
		bytes     recipe.Size
		args      []string
		off       bool
		wantEvery time.Duration
		wantBytes int64
	}{
		{name: "defaults", wantEvery: pipeline.DefaultCheckpointEvery},
		{name: "recipe", every: "2m", bytes: 64 << 20, wantEvery: 2 * time.Minute, wantBytes: 64 << 20},
		{name: "recipe off", every: "0", off: true},
		{name: "flags override", every: "2m", bytes: 64 << 20, args: []string{"--checkpoint-every", "5s", "--checkpoint-bytes", "1MiB"}, wantEvery: 5 * time.Second, wantBytes: 1 << 20},
		{name: "flag off", every: "2m", args: []string{"--checkpoint-every", "0"}, off: true},
		{name: "flag on", every: "0", args: []string{"--checkpoint-every", "1s"}, wantEvery: time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := flag.NewFlagSet("run", flag.ContinueOnError)
			rf := bindRunFlags(fs, true)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			r := &recipe.Recipe{Output: "out.mldf", CheckpointEvery: c.every, CheckpointBytes: c.bytes}
			if err := rf.apply(r); err != nil {
				t.Fatal(err)
			}
			res := resumeOf(rf.resume, &recipe.Plan{Recipe: r}, nil, io.Discard)
			if c.off {
				if res != nil {
					t.Fatalf("checkpoints on (every %v), want off", res.Every)
				}
				return
			}
			if res == nil || res.Every != c.wantEvery || res.Bytes != c.wantBytes {
				t.Fatalf("got %+v, want every %v, bytes %d", res, c.wantEvery, c.wantBytes)
			}
		})
	}
}
