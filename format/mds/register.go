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

	"github.com/mldf/convert/format"
	"github.com/mldf/convert/internal/jsonout"
	"github.com/mldf/convert/internal/quote"
)

func init() {
	// An MDS dataset is a directory holding index.json and the shards it lists: it is opened
	// by path, never sniffed.
	format.Register(format.Format{Name: formatName, Dir: true, Marker: IndexName,
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
