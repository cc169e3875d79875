package pipeline

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pq "github.com/parquet-go/parquet-go"

	"github.com/mldf/convert/internal/atomicfile"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
	"github.com/mldf/convert/sources/parquet"
	"github.com/mldf/convert/sources/tarsrc"
)

// slowBytes is bytesField taking a while per sample, so that a short run checkpoints.
type slowBytes struct{ bytesField }

func (f slowBytes) Encode(v sample.Value, meta []byte) ([]byte, error) {
	time.Sleep(100 * time.Microsecond)
	return f.bytesField.Encode(v, meta)
}

type resumeRow struct {
	ID   int64  `parquet:"id"`
	Text string `parquet:"text"`
}

// TestResumeSourcesByPosition: a Parquet run and a tar run, interrupted after a few
// checkpoints and run again, continue their source from its place (the row group and row;
// the shard and byte offset), and write the bytes of an uninterrupted run.
func TestResumeSourcesByPosition(t *testing.T) {
	dir := t.TempDir()
	// Two Parquet files of 300 rows in row groups of 50.
	var pqFiles []string
	for f := range 2 {
		rows := make([]resumeRow, 300)
		for i := range rows {
			rows[i] = resumeRow{ID: int64(f*1000 + i), Text: fmt.Sprintf("row %d of file %d %s", i, f, strings.Repeat("x", i%50))}
		}
		var buf bytes.Buffer
		w := pq.NewGenericWriter[resumeRow](&buf, pq.MaxRowsPerRowGroup(50))
		if _, err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("p%d.parquet", f))
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		pqFiles = append(pqFiles, p)
	}
	// Two uncompressed shards of 300 samples.
	var shards []string
	for s := range 2 {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for i := range 300 {
			data := fmt.Appendf(nil, "sample %d of shard %d %s", i, s, strings.Repeat("y", i%70))
			if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("s%d/%05d.bin", s, i), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
				t.Fatal(err)
			}
			tw.Write(data)
		}
		tw.Close()
		p := filepath.Join(dir, fmt.Sprintf("s%d.tar", s))
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, p)
	}
	for _, tc := range []struct {
		name   string
		open   func(t *testing.T) sources.Source
		fields []Binding
	}{
		{"parquet", func(t *testing.T) sources.Source {
			src, err := parquet.NewFiles(pqFiles, []parquet.Column{{Name: "id", Path: "id"}, {Name: "text", Path: "text"}}, parquet.Options{Workers: 2, BatchRows: 64})
			if err != nil {
				t.Fatal(err)
			}
			return src
		}, []Binding{{Field: intField{"label"}, Column: "id"}, {Field: slowBytes{bytesField{"data"}}, Column: "text"}}},
		{"tar", func(t *testing.T) sources.Source {
			src, err := tarsrc.New(shards, tarsrc.Options{Parallel: 2})
			if err != nil {
				t.Fatal(err)
			}
			return src
		}, []Binding{{Field: slowBytes{bytesField{"data"}}, Column: "bin"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.mldf")
			config := func(log *lockedBuf) Config {
				src := tc.open(t)
				return Config{Source: src, Fields: tc.fields, Output: out, PageSize: 4096, Workers: 2, ChunkSize: 16,
					Resume: &Resume{Fingerprint: Fingerprint{Recipe: "r", Version: "test", Inputs: src.(sources.Lister).Inputs()}, Every: 5 * time.Millisecond, Log: log}}
			}
			ref := filepath.Join(t.TempDir(), "ref.mldf")
			refCfg := config(nil)
			refCfg.Output, refCfg.Resume = ref, nil
			mustRun(t, refCfg)
			want, _ := os.ReadFile(ref)
			var log1 lockedBuf
			interrupt(t, config(&log1), 2)
			// The record holds the source's place: a tar run's token names the shard and the
			// byte offset; a Parquet run's place is the count alone.
			b, err := os.ReadFile(atomicfile.PartialName(out, CheckpointSuffix))
			if err != nil {
				t.Fatal(err)
			}
			var rec checkpoint
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatal(err)
			}
			if (tc.name == "tar") != bytes.Contains(rec.Token, []byte(`"off":`)) {
				t.Errorf("checkpoint at sample %d: token %s", rec.Samples, rec.Token)
			}
			var log2 lockedBuf
			mustRun(t, config(&log2))
			if lines := log2.String(); !strings.Contains(lines, "the source by its position") {
				t.Errorf("not resumed by its position:\n%s", lines)
			} else {
				t.Log(lines[strings.Index(lines, "resumed at"):][:80])
			}
			if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
				t.Errorf("the output differs from an uninterrupted run's (%d and %d bytes)", len(got), len(want))
			}
		})
	}
}
