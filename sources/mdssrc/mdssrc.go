// Package mdssrc reads a MosaicML Streaming (MDS) dataset as samples: a directory or a bucket
// prefix holding index.json and the shards it lists, one sample per MDS sample, in shard and
// sample order, with every column as a sample value (format/mds checks the index and every
// offset and size before a value is read).
//
// Values: int and the integer scalars → KindInt (a uint64 above 2^63-1 is a bad sample);
// float16, float32, float64 → KindFloat; str, str_int, str_float, str_decimal → KindString;
// json → KindJSON; jpeg and png → KindBytes named COLUMN.jpg / COLUMN.png (an image field
// decodes them); ndarray → KindBytes holding a .npy file named COLUMN.npy (an ndarray field
// reads it); bytes and the rest (pil, lists of images) → KindBytes as stored. pkl columns and
// compressed shards are refused when the source is opened.
package mdssrc

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/mldf/convert/format/mds"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// Source is a sources.Source over one MDS dataset.
type Source struct {
	dir   string
	store *objstore.Client
	ix    *mds.Index
	specs []mds.NDArraySpec
	first int // the samples of the first shard not read (a resumed source's)
}

var _ sources.Sharder = (*Source)(nil)

// join names a file of the dataset (a local directory or a bucket prefix).
func join(dir, name string) string { return strings.TrimRight(dir, "/") + "/" + name }

// New reads and checks dir's index.json (dir is a local directory or a bucket prefix).
func New(ctx context.Context, dir string, store *objstore.Client) (*Source, error) {
	if store == nil {
		store = objstore.New()
	}
	name := join(dir, mds.IndexName)
	r, err := store.OpenReaderAt(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("mds: %w", err)
	}
	defer r.Close()
	if r.Size() > mds.MaxIndexSize {
		return nil, fmt.Errorf("%w: %s: %d bytes, more than %d", mds.ErrUnsupported, name, r.Size(), mds.MaxIndexSize)
	}
	b := make([]byte, r.Size())
	if _, err := r.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, fmt.Errorf("mds: %s: %w", name, err)
	}
	ix, err := mds.ParseIndex(b, name)
	if err != nil {
		return nil, err
	}
	s := &Source{dir: dir, store: store, ix: ix, specs: make([]mds.NDArraySpec, len(ix.Columns))}
	for k, c := range ix.Columns {
		if spec, ok, _ := mds.ParseNDArray(c.Encoding); ok {
			s.specs[k] = spec
		}
	}
	return s, nil
}

// Len returns the number of samples the index lists.
func (s *Source) Len() int64 { return s.ix.Samples }

// Inputs implements sources.Lister: the shards, in order, with their sizes (as the index
// gives them).
func (s *Source) Inputs() sources.InputList {
	in := make([]sources.Input, len(s.ix.Shards))
	for i, sh := range s.ix.Shards {
		in[i] = sources.Input{Path: join(s.dir, sh.Basename), Size: max(0, sh.Bytes)}
	}
	return sources.Inputs(in)
}

// Range implements sources.Sharder: a Source over shards [lo, hi), its samples indexed from 0.
func (s *Source) Range(lo, hi int) (sources.Source, error) {
	if lo < 0 || hi > len(s.ix.Shards) || lo > hi {
		return nil, fmt.Errorf("mds: shard range [%d, %d) of %d shards", lo, hi, len(s.ix.Shards))
	}
	ix := *s.ix
	ix.Shards = s.ix.Shards[lo:hi:hi]
	ix.Samples = 0
	for _, sh := range ix.Shards {
		ix.Samples += sh.Samples
	}
	r := *s
	r.ix = &ix
	if lo > 0 {
		r.first = 0
	} else {
		ix.Samples -= int64(s.first)
	}
	return &r, nil
}

// Columns returns the dataset's columns.
func (s *Source) Columns() []mds.Column { return append([]mds.Column(nil), s.ix.Columns...) }

// Run reads the shards in order and emits one sample per MDS sample.
func (s *Source) Run(ctx context.Context, emit func(sample.Sample) error) error {
	var index int64
	for n, sh := range s.ix.Shards {
		name := join(s.dir, sh.Basename)
		err := func() error {
			r, err := s.store.OpenReaderAt(ctx, name)
			if err != nil {
				return fmt.Errorf("mds: %w", err)
			}
			defer r.Close()
			sr, err := mds.OpenShard(r, r.Size(), sh, s.ix.Columns, name)
			if err != nil {
				return err
			}
			first := 0
			if n == 0 {
				first = s.first
			}
			for i := first; i < sr.Len(); i++ {
				if err := ctx.Err(); err != nil {
					return err
				}
				vals, buf, err := sr.Sample(i, nil)
				if err != nil {
					return err
				}
				key := sh.Basename + ":" + strconv.Itoa(i)
				smp := sample.Sample{Index: index, Key: key, Origin: join(s.dir, key), InputBytes: int64(len(buf))}
				index++
				smp.Values = make([]sample.Column, 0, len(vals))
				for k, c := range s.ix.Columns {
					v, err := s.value(k, c, vals[k])
					if err != nil {
						smp.Err = fmt.Errorf("%s: column %q: %w", smp.Origin, c.Name, err)
						smp.Values = nil
						break
					}
					smp.Values = append(smp.Values, sample.Column{Name: c.Name, Value: v})
				}
				if err := emit(smp); err != nil {
					return err
				}
			}
			return nil
		}()
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// value converts one column's bytes.
func (s *Source) value(k int, c mds.Column, b []byte) (sample.Value, error) {
	switch c.Encoding {
	case "int", "int64":
		return sample.Value{Kind: sample.KindInt, Int: int64(binary.LittleEndian.Uint64(b))}, nil
	case "int8":
		return sample.Value{Kind: sample.KindInt, Int: int64(int8(b[0]))}, nil
	case "int16":
		return sample.Value{Kind: sample.KindInt, Int: int64(int16(binary.LittleEndian.Uint16(b)))}, nil
	case "int32":
		return sample.Value{Kind: sample.KindInt, Int: int64(int32(binary.LittleEndian.Uint32(b)))}, nil
	case "uint8":
		return sample.Value{Kind: sample.KindInt, Int: int64(b[0])}, nil
	case "uint16":
		return sample.Value{Kind: sample.KindInt, Int: int64(binary.LittleEndian.Uint16(b))}, nil
	case "uint32":
		return sample.Value{Kind: sample.KindInt, Int: int64(binary.LittleEndian.Uint32(b))}, nil
	case "uint64":
		v := binary.LittleEndian.Uint64(b)
		if v > math.MaxInt64 {
			return sample.Value{}, fmt.Errorf("%w: uint64 %d is above the int64 range", mds.ErrEncoding, v)
		}
		return sample.Value{Kind: sample.KindInt, Int: int64(v)}, nil
	case "float16":
		return sample.Value{Kind: sample.KindFloat, Float: float64(half(binary.LittleEndian.Uint16(b)))}, nil
	case "float32":
		return sample.Value{Kind: sample.KindFloat, Float: float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))}, nil
	case "float64":
		return sample.Value{Kind: sample.KindFloat, Float: math.Float64frombits(binary.LittleEndian.Uint64(b))}, nil
	case "str", "str_int", "str_float", "str_decimal":
		return sample.Value{Kind: sample.KindString, Bytes: b}, nil
	case "json":
		return sample.Value{Kind: sample.KindJSON, Bytes: b}, nil
	case "jpeg":
		return sample.Value{Kind: sample.KindBytes, Bytes: b, Name: c.Name + ".jpg"}, nil
	case "png":
		return sample.Value{Kind: sample.KindBytes, Bytes: b, Name: c.Name + ".png"}, nil
	}
	if strings.HasPrefix(c.Encoding, "ndarray") {
		a, err := mds.DecodeNDArray(s.specs[k], b)
		if err != nil {
			return sample.Value{}, err
		}
		shape := make([]uint64, len(a.Shape))
		for i, d := range a.Shape {
			shape[i] = uint64(d)
		}
		descr := npyDescr[a.Dtype]
		npy := append(mldf.AppendNPYHeader(make([]byte, 0, 128+len(a.Data)), descr, shape), a.Data...)
		return sample.Value{Kind: sample.KindBytes, Bytes: npy, Name: c.Name + ".npy"}, nil
	}
	return sample.Value{Kind: sample.KindBytes, Bytes: b}, nil
}

// npyDescr maps MDS ndarray dtypes to numpy descrs.
var npyDescr = map[string]string{"uint8": "|u1", "int8": "|i1", "uint16": "<u2", "int16": "<i2", "float16": "<f2",
	"uint32": "<u4", "int32": "<i4", "float32": "<f4", "uint64": "<u8", "int64": "<i8", "float64": "<f8"}

// half converts an IEEE 754 half-precision value.
func half(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		f := float32(frac) / 1024 / 16384
		if sign != 0 {
			f = -f
		}
		return f
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
}
