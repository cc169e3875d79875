package export

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/mldf/convert/format/mds"
	"github.com/mldf/convert/format/mldf"
)

// MDSOptions configure MDS.
type MDSOptions struct {
	// SizeLimit bounds a shard's bytes (0: 64 MiB, MDSWriter's default).
	SizeLimit int64
	// Resume continues an export stopped after the shards Done (mds.Writer Resume): dir may
	// hold them and a killed export's leftovers, the samples they hold are not written again,
	// and the dataset is the bytes of an uninterrupted export.
	Resume bool
	Done   []mds.ShardState
	// OnShard, when set, is called after each shard is durable (mds.WriterOptions.OnShard):
	// a checkpoint records them for Resume.
	OnShard func(mds.ShardState) error
}

// mdsDtypes maps numpy descrs to MDS ndarray dtypes.
var mdsDtypes = map[string]string{"|u1": "uint8", "|i1": "int8", "<u2": "uint16", "<i2": "int16", "<f2": "float16",
	"<u4": "uint32", "<i4": "int32", "<f4": "float32", "<u8": "uint64", "<i8": "int64", "<f8": "float64",
	"u1": "uint8", "i1": "int8", "<u1": "uint8", "<i1": "int8"}

// MDS writes r's samples to dir as a MosaicML Streaming (MDS) dataset: shards
// shard.NNNNN.mds and index.json, one column per field, named like the field.
//
//	IMAGE_JPEG         → jpeg (the JPEG as stored)
//	IMAGE_PNG, IMAGE_RAW → png (raw pixels encoded as PNG)
//	INT                → int (int64)
//	FLOAT              → float64
//	TEXT_RAW           → str
//	JSON               → json
//	NDARRAY            → ndarray (dtype and shape in each value)
//	BYTES and the rest → bytes (the payload as stored)
//
// dir must be absent or empty; each shard is written to a temporary file and renamed into
// place, and index.json comes last. The same input always gives the same bytes.
func MDS(ctx context.Context, r *mldf.Reader, dir string, o MDSOptions) (res Result, err error) {
	if o.SizeLimit < 0 || o.SizeLimit > mds.MaxSizeLimit {
		return res, fmt.Errorf("%w: shard size limit %d", ErrOption, o.SizeLimit)
	}
	if o.Resume {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return res, fmt.Errorf("export: %w", err)
		}
	} else if err := prepareDir(dir); err != nil {
		return res, err
	}
	fields := r.Fields()
	cols := make([]mds.Column, len(fields))
	for k, fd := range fields {
		enc := "bytes"
		switch t := fd.Type; {
		case t == mldf.TypeImageJPEG:
			enc = "jpeg"
		case t == mldf.TypeImagePNG || t == mldf.TypeImageRaw:
			enc = "png"
		case t == mldf.TypeInt:
			enc = "int"
		case t == mldf.TypeFloat:
			enc = "float64"
		case t == mldf.TypeTextRaw:
			enc = "str"
		case t == mldf.TypeJSON:
			enc = "json"
		case t == mldf.TypeNDArray:
			enc = "ndarray"
		}
		cols[k] = mds.Column{Name: fd.Name, Encoding: enc}
	}
	wo := mds.WriterOptions{SizeLimit: o.SizeLimit, OnShard: o.OnShard}
	var w *mds.Writer
	var from int64
	if o.Resume {
		w, err = mds.Resume(dir, cols, wo, o.Done)
		for _, d := range o.Done {
			from += d.Samples
		}
		if err == nil && from > int64(r.NumSamples()) {
			err = fmt.Errorf("%w: the finished shards hold %d samples, the file %d", mds.ErrResume, from, r.NumSamples())
		}
	} else {
		w, err = mds.Create(dir, cols, wo)
	}
	if err != nil {
		return res, fmt.Errorf("%s: %w", r.Name(), err)
	}
	defer func() {
		// An interrupted export that checkpoints keeps its shards for Resume.
		if err != nil && (o.OnShard == nil || ctx.Err() == nil) {
			w.Abort()
		}
	}()
	res.Samples = int(from)
	vals := make([][]byte, len(fields))
	for i := int(from); i < r.NumSamples(); i++ {
		if err := checkCtx(ctx, i); err != nil {
			return res, err
		}
		for k, fd := range fields {
			v, err := mdsValue(r, i, k, fd, cols[k].Encoding)
			if err != nil {
				return res, fmt.Errorf("%s: %w", where(r, i, k), err)
			}
			vals[k] = v
		}
		if err := w.Write(vals); err != nil {
			return res, fmt.Errorf("%s: %w", where(r, i, -1), err)
		}
		res.Samples++
	}
	if err := w.Close(); err != nil {
		return res, err
	}
	res.Files = w.Shards()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if st, err := os.Stat(filepath.Join(dir, e.Name())); err == nil {
			res.Bytes += st.Size()
		}
	}
	return res, nil
}

// mdsValue encodes field k of sample i for an MDS column of encoding enc.
func mdsValue(r *mldf.Reader, i, k int, fd mldf.FieldDesc, enc string) ([]byte, error) {
	switch enc {
	case "int":
		v, err := r.Int(i, k)
		return binary.LittleEndian.AppendUint64(nil, uint64(v)), err
	case "float64":
		v, err := r.Float(i, k)
		return binary.LittleEndian.AppendUint64(nil, math.Float64bits(v)), err
	case "jpeg", "png":
		m, p, err := r.Image(i, k)
		if err != nil || len(p) == 0 {
			return p, err
		}
		b, _, err := imageFile(m, p)
		return b, err
	case "ndarray":
		p, err := r.Payload(i, k)
		if err != nil || len(p) == 0 {
			return p, err
		}
		b, err := ndarrayFile(fd.Arguments, p)
		if err != nil {
			return nil, err
		}
		a, err := mldf.ParseNPY(b)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrValue, err)
		}
		dt, ok := mdsDtypes[a.Descr]
		if !ok {
			return nil, fmt.Errorf("%w: NDARRAY of dtype %q: MDS ndarrays are (u)int8-64 and float16-64, little-endian", ErrValue, a.Descr)
		}
		shape := make([]int, len(a.Shape))
		for d, n := range a.Shape {
			shape[d] = int(n)
		}
		v, err := mds.EncodeNDArray(mds.NDArraySpec{}, mds.NDArray{Dtype: dt, Shape: shape, Data: a.Data})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrValue, err)
		}
		return v, nil
	}
	return r.Payload(i, k)
}
