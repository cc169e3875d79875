package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/internal/atomicfile"
	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/pipeline"
)

// TestReattachedUploadNotOpened: an upload a resumed run reattached but whose writer never
// opened it (the run failed in between) is aborted after the run, unless the checkpoint that
// names it is still there for the next run; once a writer opened it, the writer owns it.
func TestReattachedUploadNotOpened(t *testing.T) {
	startS3(t)
	ctx := context.Background()
	for _, c := range []struct {
		name       string
		record     bool // the checkpoint record is still there after the run
		opened     bool // the run's writer opened the reattached upload
		wantKeptUp bool
	}{
		{name: "failed, checkpoint removed", wantKeptUp: false},
		{name: "interrupted, checkpoint kept", record: true, wantKeptUp: true},
		{name: "the writer opened it", opened: true, wantKeptUp: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := newStorage()
			defer st.Close()
			url := "s3://bkt/reattach/" + filepath.Base(t.Name()) + ".mldf"
			up, err := st.client.NewUpload(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer up.Abort(ctx)
			open, err := st.reattach(url)(ctx, pagewriter.UploadState{ID: up.ID()})
			if err != nil {
				t.Fatal(err)
			}
			state := filepath.Join(t.TempDir(), "out.mldf")
			if c.record {
				if err := os.WriteFile(atomicfile.PartialName(state, pipeline.CheckpointSuffix), []byte("{}"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if c.opened {
				if _, err := open(pagewriter.SinkLayout{}); err != nil {
					t.Fatal(err)
				}
			}
			st.abortUnopened(state)
			left, err := st.client.ListIncomplete(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			if kept := len(left) == 1; kept != c.wantKeptUp {
				t.Fatalf("upload kept: %v, want %v (%v)", kept, c.wantKeptUp, left)
			}
		})
	}
}
