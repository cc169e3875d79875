package mds

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/mldf/convert/format"
	"github.com/mldf/convert/internal/jsonout"
	"github.com/mldf/convert/internal/quote"
)

func init() {
	// An MDS dataset is a directory holding index.json and the shards it lists: it is opened
	// by path, never sniffed.
	format.Register(format.Format{Name: "mds", Dir: true, Marker: IndexName,
		OpenPath: func(_ context.Context, dir string) (format.File, error) { return OpenDir(dir) },
	})
}

// File is an MDS dataset (a local directory) as a format.File.
type File struct {
	Dir   string
	Index *Index
}

// OpenDir reads and checks the index of the dataset in dir (ParseIndex). The shards are
// opened as they are read.
func OpenDir(dir string) (*File, error) {
	name := filepath.Join(dir, IndexName)
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("mds: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxIndexSize+1))
	if err != nil {
		return nil, fmt.Errorf("mds: %s: %w", name, err)
	}
	ix, err := ParseIndex(b, name)
	if err != nil {
		return nil, err
	}
	return &File{Dir: dir, Index: ix}, nil
}

// Close does nothing: the shards are closed as they are read.
func (f *File) Close() error { return nil }

// withShard opens shard k and calls fn with its reader.
func (f *File) withShard(k int, fn func(*ShardReader) error) error {
	sh := f.Index.Shards[k]
	name := filepath.Join(f.Dir, sh.Basename)
	fd, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("mds: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return fmt.Errorf("mds: %w", err)
	}
	sr, err := OpenShard(fd, st.Size(), sh, f.Index.Columns, name)
	if err != nil {
		return err
	}
	return fn(sr)
}

// Description is what inspect shows of an MDS dataset; it encodes as DescriptionJSON.
type Description struct {
	Dir     string
	Columns []Column
	Shards  []Shard
	Samples int64
}

// Describe returns the dataset's Description, from its index.
func (f *File) Describe() (format.Text, error) {
	return &Description{Dir: f.Dir, Columns: f.Index.Columns, Shards: f.Index.Shards, Samples: f.Index.Samples}, nil
}

// WriteText prints the description.
func (d *Description) WriteText(w io.Writer) error {
	var bytes int64
	for _, s := range d.Shards {
		bytes += max(s.Bytes, 0)
	}
	fmt.Fprintf(w, "dataset    %s (MDS version 2, uncompressed)\n", d.Dir)
	fmt.Fprintf(w, "samples    %d in %d shards (%s)\n", d.Samples, len(d.Shards), format.Size(uint64(bytes)))
	fmt.Fprintln(w, "columns")
	for i, c := range d.Columns {
		size := "variable size"
		if c.Size > 0 {
			size = fmt.Sprintf("%d bytes", c.Size)
		}
		fmt.Fprintf(w, "  #%d %-16s %-12s %s\n", i, quote.Q(c.Name), c.Encoding, size)
	}
	return nil
}

// DescriptionJSON is the JSON form of a Description.
type DescriptionJSON struct {
	jsonout.Head
	Format     string       `json:"format"`
	File       string       `json:"file"`
	Version    string       `json:"version"`
	NumSamples jsonout.I64  `json:"num_samples"`
	NumShards  int          `json:"num_shards"`
	Columns    []ColumnJSON `json:"columns"`
	Shards     []ShardJSON  `json:"shards"`
}

// ColumnJSON is a column: its encoding and its size in bytes (0: variable).
type ColumnJSON struct {
	Name     string `json:"name"`
	Encoding string `json:"encoding"`
	Size     int    `json:"size"`
}

// ShardJSON is one shard of the index (file_size -1: not given).
type ShardJSON struct {
	File       string      `json:"file"`
	NumSamples jsonout.I64 `json:"num_samples"`
	FileSize   jsonout.I64 `json:"file_size"`
}

// MarshalJSON encodes the description as DescriptionJSON.
func (d *Description) MarshalJSON() ([]byte, error) {
	out := DescriptionJSON{Head: jsonout.NewHead(jsonout.KindInspect), Format: "mds", File: d.Dir, Version: "2",
		NumSamples: jsonout.I64(d.Samples), NumShards: len(d.Shards), Columns: make([]ColumnJSON, len(d.Columns)),
		Shards: make([]ShardJSON, len(d.Shards))}
	for i, c := range d.Columns {
		out.Columns[i] = ColumnJSON(c)
	}
	for i, s := range d.Shards {
		out.Shards[i] = ShardJSON{File: s.Basename, NumSamples: jsonout.I64(s.Samples), FileSize: jsonout.I64(s.Bytes)}
	}
	return json.Marshal(out)
}

// SampleText is one sample as inspect --sample shows it; it encodes as SampleJSON.
type SampleText struct {
	Dir       string
	Index, Of int64
	Shard     string
	Columns   []Column
	Values    [][]byte
}

// Sample reads sample i from its shard.
func (f *File) Sample(i int64) (format.Text, error) {
	if i < 0 || i >= f.Index.Samples {
		return nil, fmt.Errorf("mds: %s: sample %d of %d", f.Dir, i, f.Index.Samples)
	}
	k, j := 0, i
	for j >= f.Index.Shards[k].Samples {
		j -= f.Index.Shards[k].Samples
		k++
	}
	out := SampleText{Dir: f.Dir, Index: i, Of: f.Index.Samples, Shard: f.Index.Shards[k].Basename, Columns: f.Index.Columns}
	err := f.withShard(k, func(sr *ShardReader) error {
		vals, _, err := sr.Sample(int(j), nil)
		out.Values = vals
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scalar decodes a fixed-size numeric column's value, or returns false.
func scalar(enc string, b []byte) (any, bool) {
	le := binary.LittleEndian
	switch {
	case (enc == "int" || enc == "int64") && len(b) == 8:
		return jsonout.I64(int64(le.Uint64(b))), true
	case enc == "int8" && len(b) == 1:
		return int8(b[0]), true
	case enc == "int16" && len(b) == 2:
		return int16(le.Uint16(b)), true
	case enc == "int32" && len(b) == 4:
		return int32(le.Uint32(b)), true
	case enc == "uint8" && len(b) == 1:
		return b[0], true
	case enc == "uint16" && len(b) == 2:
		return le.Uint16(b), true
	case enc == "uint32" && len(b) == 4:
		return le.Uint32(b), true
	case enc == "uint64" && len(b) == 8:
		return jsonout.U64(le.Uint64(b)), true
	case enc == "float32" && len(b) == 4:
		return jsonout.Float(math.Float32frombits(le.Uint32(b))), true
	case enc == "float64" && len(b) == 8:
		return jsonout.Float(math.Float64frombits(le.Uint64(b))), true
	}
	return nil, false
}

// textual says whether a column's value is text (shown as it is, when UTF-8).
func textual(enc string) bool {
	return enc == "str" || enc == "json" || enc == "str_int" || enc == "str_float" || enc == "str_decimal"
}

// maxShownText bounds the text of a value inspect shows.
const maxShownText = 4096

// WriteText prints the sample, one column a line.
func (s SampleText) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "sample %d of %d (in %s)\n", s.Index, s.Of, s.Shard)
	for k, c := range s.Columns {
		v := s.Values[k]
		fmt.Fprintf(w, "  %s %s", quote.Q(c.Name), c.Encoding)
		if x, ok := scalar(c.Encoding, v); ok {
			b, _ := json.Marshal(x)
			fmt.Fprintf(w, " %s\n", b)
			continue
		}
		fmt.Fprintf(w, ", %d bytes", len(v))
		if textual(c.Encoding) {
			fmt.Fprintf(w, ": %s", quote.B(v))
		}
		fmt.Fprintln(w)
	}
	return nil
}

// SampleJSON is the JSON form of a SampleText.
type SampleJSON struct {
	jsonout.Head
	Format     string      `json:"format"`
	File       string      `json:"file"`
	Index      jsonout.I64 `json:"index"`
	NumSamples jsonout.I64 `json:"num_samples"`
	Shard      string      `json:"shard"`
	Values     []ValueJSON `json:"values"`
}

// ValueJSON is one column's value: a number for the numeric encodings, the text for the
// textual ones (at most 4096 bytes, with text_truncated), and its size in bytes.
type ValueJSON struct {
	Column        int     `json:"column"`
	Name          string  `json:"name"`
	Encoding      string  `json:"encoding"`
	Bytes         int     `json:"bytes"`
	Number        any     `json:"number,omitempty"`
	Text          *string `json:"text,omitempty"`
	TextTruncated bool    `json:"text_truncated,omitempty"`
}

// MarshalJSON encodes the sample as SampleJSON.
func (s SampleText) MarshalJSON() ([]byte, error) {
	out := SampleJSON{Head: jsonout.NewHead(jsonout.KindSample), Format: "mds", File: s.Dir, Index: jsonout.I64(s.Index),
		NumSamples: jsonout.I64(s.Of), Shard: s.Shard, Values: make([]ValueJSON, len(s.Columns))}
	for k, c := range s.Columns {
		v := s.Values[k]
		vj := ValueJSON{Column: k, Name: c.Name, Encoding: c.Encoding, Bytes: len(v)}
		if x, ok := scalar(c.Encoding, v); ok {
			vj.Number = x
		} else if textual(c.Encoding) && utf8.Valid(v) {
			t := v
			if len(t) > maxShownText {
				t, vj.TextTruncated = t[:maxShownText], true
				for len(t) > 0 && !utf8.Valid(t) {
					t = t[:len(t)-1]
				}
			}
			str := string(t)
			vj.Text = &str
		}
		out.Values[k] = vj
	}
	return json.Marshal(out)
}

// VerifyReport is what verify checked of a dataset.
type VerifyReport struct {
	Dir                   string
	Shards                int
	Samples, PayloadBytes int64
}

// Verify reads every shard and every sample: the shard's header against the index, every
// sample's offsets and column sizes (OpenShard, ShardReader.Sample). MDS has no checksums
// this reader checks.
func (f *File) Verify(ctx context.Context, _ format.VerifyOptions) (format.Text, error) {
	rep := &VerifyReport{Dir: f.Dir, Shards: len(f.Index.Shards)}
	var buf []byte
	for k := range f.Index.Shards {
		err := f.withShard(k, func(sr *ShardReader) error {
			for j := range sr.Len() {
				if j%4096 == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				vals, b, err := sr.Sample(j, buf)
				buf = b
				if err != nil {
					return err
				}
				rep.Samples++
				for _, v := range vals {
					rep.PayloadBytes += int64(len(v))
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// WriteText prints the report's line.
func (rep *VerifyReport) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%s: OK: MDS dataset, %d samples in %d shards, %s of values; structure checked (no checksums verified)\n",
		rep.Dir, rep.Samples, rep.Shards, format.Size(uint64(rep.PayloadBytes)))
	return err
}

// VerifyJSON is the JSON form of a VerifyReport.
type VerifyJSON struct {
	jsonout.Head
	Format       string      `json:"format"`
	File         string      `json:"file"`
	NumShards    int         `json:"num_shards"`
	NumSamples   jsonout.I64 `json:"num_samples"`
	PayloadBytes jsonout.I64 `json:"payload_bytes"`
	Checksummed  bool        `json:"checksummed"`
}

// MarshalJSON encodes the report as VerifyJSON.
func (rep *VerifyReport) MarshalJSON() ([]byte, error) {
	return json.Marshal(VerifyJSON{Head: jsonout.NewHead(jsonout.KindVerify), Format: "mds", File: rep.Dir, NumShards: rep.Shards,
		NumSamples: jsonout.I64(rep.Samples), PayloadBytes: jsonout.I64(rep.PayloadBytes)})
}
