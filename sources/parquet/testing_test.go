package parquet

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mldf/convert/sample"
)

// sharedTesting is Apache Parquet's own test files, beside the project root.
const sharedTesting = "../../../shared/testdata/parquet-testing"

func sharedDir(t *testing.T, sub string) string {
	t.Helper()
	dir := filepath.Join(sharedTesting, sub)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no %s (../shared is absent in a plain clone): %v", dir, err)
	}
	return dir
}

// allColumns names every top-level column of a file as JSON: the generic recipe.
func allColumns(t *testing.T, path string) ([]Column, error) {
	f, err := openFile(OpenFile, path)
	if err != nil {
		return nil, err
	}
	defer f.close()
	var cols []Column
	for _, c := range f.schema.Root.Columns() {
		cols = append(cols, Column{Name: c.Name(), Path: c.Name(), As: AsJSON})
	}
	return cols, nil
}

// convertAll reads every row of path, with a deadline; it returns the samples' JSON values.
func convertAll(t *testing.T, path string, cols []Column, workers int) ([]sample.Sample, error) {
	type result struct {
		got []sample.Sample
		err error
	}
	done := make(chan result, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() {
		var got []sample.Sample
		var err error
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s: panic: %v", path, r)
				done <- result{nil, errors.New("panic")}
			}
		}()
		var src *Source
		if cols == nil {
			cols, err = allColumns(t, path)
		}
		if err == nil {
			src, err = New([]string{path}, cols, Options{Workers: workers, BatchRows: 7, BatchBytes: 1 << 10})
		}
		if err == nil {
			err = src.Run(ctx, func(s sample.Sample) error {
				if s.Err != nil {
					if !strings.Contains(s.Err.Error(), path) {
						t.Errorf("row error does not name the file: %v", s.Err)
					}
					return s.Err
				}
				for _, c := range s.Values {
					if c.Value.Kind == sample.KindJSON && !json.Valid(c.Value.Bytes) {
						t.Errorf("%s: %s: column %s is not valid JSON: %.200s", path, s.Origin, c.Name, c.Value.Bytes)
					}
				}
				got = append(got, s)
				return nil
			})
		}
		done <- result{got, err}
	}()
	select {
	case r := <-done:
		return r.got, r.err
	case <-time.After(90 * time.Second):
		t.Fatalf("%s: hang", path)
	}
	return nil, nil
}

// dataExpect lists the files of parquet-testing/data that do not simply convert with every
// column read as JSON, and what they give instead. Every other file must convert.
var dataExpect = map[string]struct {
	err  error  // the class of error
	text string // a part of the message
}{
	// Files that are meant to fail.
	"datapage_v1-corrupt-checksum.parquet":           {ErrCorrupt, "crc32 checksum mismatch"},
	"rle-dict-uncompressed-corrupt-checksum.parquet": {ErrCorrupt, "crc32 checksum mismatch"},
	"nation.dict-malformed.parquet":                  {ErrCorrupt, `column "name"`},
	// Unsupported features.
	"hadoop_lz4_compressed.parquet":        {ErrUnsupported, "deprecated LZ4 codec"},
	"hadoop_lz4_compressed_larger.parquet": {ErrUnsupported, "deprecated LZ4 codec"},
	"non_hadoop_lz4_compressed.parquet":    {ErrUnsupported, "deprecated LZ4 codec"},
	// Per-row value errors (the error policy applies to these rows).
	"int96_from_spark.parquet":        {ErrValue, "out of the int64 nanosecond range"},
	"large_string_map.brotli.parquet": {ErrUnsupported, "more than the limit of 268435456"},
	// Limitations of parquet-go v0.32.0 on valid files, reported as errors naming the file.
	"column_chunk_key_value_metadata.parquet": {ErrCorrupt, "missing required field"}, // a key without a value
}

func TestParquetTestingData(t *testing.T) {
	dir := sharedDir(t, "data")
	files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	enc, _ := filepath.Glob(filepath.Join(dir, "*.parquet.encrypted"))
	files = append(files, enc...)
	counts := map[string]int{}
	for _, path := range files {
		name := filepath.Base(path)
		if testing.Short() && name == "large_string_map.brotli.parquet" {
			continue // one 1 GiB page
		}
		want, listed := dataExpect[name]
		if strings.HasSuffix(name, ".encrypted") {
			want, listed = struct {
				err  error
				text string
			}{ErrUnsupported, "encrypted Parquet"}, true
		}
		got, err := convertAll(t, path, nil, 2)
		switch {
		case err == nil && !listed:
			counts["convert"]++
			if len(got) == 0 {
				t.Errorf("%s: no rows", name)
			}
		case err == nil:
			t.Errorf("%s: converted, want %v (%s)", name, want.err, want.text)
		case !listed:
			t.Errorf("%s: %v", name, err)
		case !errors.Is(err, want.err) || !strings.Contains(err.Error(), want.text) || !strings.Contains(err.Error(), name):
			t.Errorf("%s: error %v, want %v naming the file and %q", name, err, want.err, want.text)
		default:
			if errors.Is(err, ErrUnsupported) {
				counts["unsupported"]++
			} else {
				counts["error"]++
			}
			t.Logf("%-45s %v", name, err)
		}
	}
	t.Logf("%d files: %d convert, %d unsupported, %d errors as expected", len(files), counts["convert"], counts["unsupported"], counts["error"])
}

// badExpect: every file of bad_data gives an error, except ARROW-GH-43605, which is valid (a
// one-entry dictionary whose indices use bit width 0; it crashed arrow-go's reader).
var badConverts = map[string]bool{"ARROW-GH-43605.parquet": true}

func TestParquetTestingBadData(t *testing.T) {
	dir := sharedDir(t, "bad_data")
	files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	for _, path := range files {
		name := filepath.Base(path)
		_, err := convertAll(t, path, nil, 2)
		if badConverts[name] || knownUndetected[name] {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !strings.Contains(err.Error(), name) {
			t.Errorf("%s: the error does not name the file: %v", name, err)
		}
		t.Logf("%-40s %v", name, err)
	}
}

// TestEmptyDataPageV2: a compressed column's data page v2 that holds no values (zero bytes,
// not even an empty compressed stream) reads as its one null row.
func TestEmptyDataPageV2(t *testing.T) {
	path := filepath.Join(sharedDir(t, "data"), "datapage_v2_empty_datapage.snappy.parquet")
	got, err := convertAll(t, path, nil, 1)
	if err != nil || len(got) != 1 || len(got[0].Values) != 0 {
		t.Fatalf("%d rows (%v): %v, want one row of nulls", len(got), got, err)
	}
}
