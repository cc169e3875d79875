package export

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
)

// ParquetOptions configure Parquet.
type ParquetOptions struct {
	// Classes are the class names of class-label INT fields by field name (those of
	// FILE.classes.json beside a file written before names went into the file); they become
	// ClassLabel features, as do the names the file holds (reader.ClassNames), which come
	// first. Names that do not match the field's arguments are an error.
	Classes map[string][]string
	// Key is a TEXT_RAW field holding each sample's key or source path (from: __key__ or
	// from: path); it fills the path member of image and audio columns (a key without an
	// extension gets the payload's). "" means the TEXT_RAW field called "path", "key" or
	// "__key__" if there is one; "-" means none (path stays null).
	Key string
	// RowsPerGroup is the rows per row group (0: 100 when the file has an image or audio
	// field, as the Hugging Face Hub writes them, else 10000).
	RowsPerGroup int
	// FileSamples bounds the rows per file (0: one file).
	FileSamples int
}

// pqColumn is how one MLDF field is written.
type pqColumn struct {
	f       int // field index
	name    string
	kind    pqKind
	feature string // the Hugging Face feature JSON
	leaves  []int  // its leaf columns in the Parquet schema (filled after the schema is built)
}

type pqKind uint8

const (
	pqInt pqKind = iota
	pqFloat
	pqString
	pqJSON
	pqBinary
	pqBlob // struct {bytes, path}: image or audio
	pqIDs  // list<int32>
	pqList // list of numbers: a 1-D fixed NDARRAY
)

// Parquet writes r's samples to dir as Hugging Face-style Parquet files dir/data-NNNNNN.parquet:
// one column per field, named like the field, with the features JSON under the "huggingface"
// key of the file metadata, snappy-compressed data pages v1.
//
//	IMAGE_*            → struct {bytes: binary, path: string} (Image): JPEG/PNG as stored, raw pixels as PNG; path null
//	AUDIO_COMPRESSED   → struct {bytes, path} (Audio): the FLAC stream
//	AUDIO_WAVEFORM     → struct {bytes, path} (Audio): a WAV file built from the field's arguments
//	INT                → int64 (ClassLabel with its names when Classes has them, else Value int64)
//	FLOAT              → double (Value float64)
//	TEXT_RAW           → string (Value string)
//	JSON               → string annotated JSON (Value string)
//	TEXT_TOKENIZED/PACKED → list<int32> (Sequence of int32)
//	NDARRAY, fixed 1-D numeric → list of its dtype (Sequence with length)
//	BYTES → binary (Value binary); other NDARRAY → binary holding a .npy file
//
// An empty payload is a null (it marks a missing optional value), except that TEXT_RAW and
// BYTES payloads are kept as empty values. dir must be absent or empty; each file is written
// to a temporary file and renamed into place when complete. The same input always gives the
// same bytes.
func Parquet(ctx context.Context, r *mldf.Reader, dir string, o ParquetOptions) (Result, error) {
	var res Result
	if o.RowsPerGroup < 0 || o.FileSamples < 0 {
		return res, fmt.Errorf("%w: rows per group %d, file samples %d", ErrOption, o.RowsPerGroup, o.FileSamples)
	}
	fields := r.Fields()
	group := parquet.Group{}
	var cols []*pqColumn
	var features []string
	media := false
	var skipBounds []string
	key, err := keyField(r, o.Key)
	if err != nil {
		return res, err
	}
	for k, fd := range fields {
		c := &pqColumn{f: k, name: fd.Name}
		var node parquet.Node
		switch t := fd.Type; {
		case isImage(t) || t == mldf.TypeAudioCompressed || t == mldf.TypeAudioWaveform:
			c.kind, media = pqBlob, true
			c.feature = `{"_type": "Image"}`
			if !isImage(t) {
				c.feature = `{"_type": "Audio"}`
			}
			node = parquet.Group{"bytes": parquet.Optional(parquet.Leaf(parquet.ByteArrayType)), "path": parquet.Optional(parquet.String())}
			skipBounds = append(skipBounds, fd.Name+".bytes")
		case t == mldf.TypeInt:
			c.kind, node = pqInt, parquet.Int(64)
			c.feature = `{"dtype": "int64", "_type": "Value"}`
			names, err := r.ClassNames(k)
			if err != nil {
				return res, err
			}
			if names == nil {
				names = o.Classes[fd.Name]
			}
			if names != nil {
				if err := encoders.CheckClassNames(fd.Arguments, names); err != nil {
					return res, fmt.Errorf("%s: field %q: %w", r.Name(), fd.Name, err)
				}
				c.feature = `{"names": ` + string(encoders.ClassNamesJSON(names)) + `, "_type": "ClassLabel"}`
			}
		case t == mldf.TypeFloat:
			c.kind, node = pqFloat, parquet.Leaf(parquet.DoubleType)
			c.feature = `{"dtype": "float64", "_type": "Value"}`
		case t == mldf.TypeTextRaw:
			c.kind, node = pqString, parquet.String()
			c.feature = `{"dtype": "string", "_type": "Value"}`
		case t == mldf.TypeJSON:
			c.kind, node = pqJSON, parquet.JSON()
			c.feature = `{"dtype": "string", "_type": "Value"}`
		case t == mldf.TypeTextTokenized || t == mldf.TypeTextPacked:
			c.kind, node = pqIDs, parquet.List(parquet.Int(32))
			c.feature = `{"feature": {"dtype": "int32", "_type": "Value"}, "_type": "Sequence"}`
		case t == mldf.TypeNDArray && fixed1D(fd.Arguments) != nil:
			leaf, dtype, n := fixed1D(fd.Arguments)()
			c.kind, node = pqList, parquet.List(parquet.Leaf(leaf))
			c.feature = fmt.Sprintf(`{"feature": {"dtype": %q, "_type": "Value"}, "length": %d, "_type": "Sequence"}`, dtype, n)
		default:
			c.kind, node = pqBinary, parquet.Leaf(parquet.ByteArrayType)
			c.feature = `{"dtype": "binary", "_type": "Value"}`
			skipBounds = append(skipBounds, fd.Name)
		}
		if _, dup := group[fd.Name]; dup {
			return res, fmt.Errorf("%s: %w: two fields named %q", r.Name(), ErrField, fd.Name)
		}
		group[fd.Name] = parquet.Optional(node)
		cols = append(cols, c)
		name, _ := json.Marshal(fd.Name)
		features = append(features, string(name)+": "+c.feature)
	}
	schema := parquet.NewSchema("hf", group)
	for i, path := range schema.Columns() {
		for _, c := range cols {
			if path[0] == c.name {
				c.leaves = append(c.leaves, i)
			}
		}
	}
	rows := o.RowsPerGroup
	if rows == 0 {
		rows = 10000
		if media {
			rows = 100
		}
	}
	opts := []parquet.WriterOption{
		schema, parquet.Compression(&snappy.Codec{}), parquet.MaxRowsPerRowGroup(int64(rows)),
		parquet.DataPageVersion(1), parquet.PageBufferSize(1 << 20), parquet.DataPageStatistics(false),
		parquet.CreatedBy("convert", "", ""),
		parquet.KeyValueMetadata("huggingface", `{"info": {"features": {`+strings.Join(features, ", ")+`}}}`),
	}
	for _, p := range skipBounds {
		opts = append(opts, parquet.SkipPageBounds(strings.Split(p, ".")...))
	}
	if err := prepareDir(dir); err != nil {
		return res, err
	}
	n := r.NumSamples()
	per := o.FileSamples
	if per == 0 {
		per = max(n, 1)
	}
	row := make(parquet.Row, 0, len(schema.Columns()))
	for start := 0; start < n || (n == 0 && start == 0); start += per {
		path := filepath.Join(dir, fmt.Sprintf("data-%06d.parquet", res.Files))
		a, err := createAtomic(path)
		if err != nil {
			return res, err
		}
		cw := &countingWriter{w: a}
		bw := bufio.NewWriterSize(cw, 1<<20)
		w := parquet.NewWriter(bw, opts...)
		for i := start; i < min(start+per, n); i++ {
			if err := checkCtx(ctx, i); err != nil {
				a.Abort()
				return res, err
			}
			row = row[:0]
			for _, c := range cols {
				if row, err = appendColumn(row, r, i, c, fields[c.f], key); err != nil {
					a.Abort()
					return res, err
				}
			}
			if _, err := w.WriteRows([]parquet.Row{sortRow(row)}); err != nil {
				a.Abort()
				return res, fmt.Errorf("%s: %w", where(r, i, -1), err)
			}
			res.Samples++
		}
		err = w.Close()
		if err == nil {
			err = bw.Flush()
		}
		if err != nil {
			a.Abort()
			return res, fmt.Errorf("export: writing %s: %w", path, err)
		}
		if err := a.Commit(true); err != nil {
			return res, err
		}
		res.Files++
		res.Bytes += cw.n
		if n == 0 {
			break
		}
	}
	return res, nil
}

// keyField resolves ParquetOptions.Key: the index of the TEXT_RAW field holding keys or
// paths, or -1.
func keyField(r *mldf.Reader, name string) (int, error) {
	isText := func(t mldf.TypeID) bool { return t == mldf.TypeTextRaw }
	switch name {
	case "-":
		return -1, nil
	case "":
		for _, n := range []string{"path", "key", "__key__"} {
			if f := r.FieldIndex(n); f >= 0 && isText(r.Fields()[f].Type) {
				return f, nil
			}
		}
		return -1, nil
	}
	return pickField(r, name, name, "TEXT_RAW", "--key", isText)
}

// keyPath returns the path member of sample i's blob: the key field's text, with ext (or the
// extension of the field's media) appended when its base name has none; "" when empty.
func keyPath(r *mldf.Reader, i, key int, ext string, fd mldf.FieldDesc) (string, error) {
	_, p, err := r.Text(i, key)
	if err != nil || len(p) == 0 {
		return "", err
	}
	path := string(p)
	if base := path[strings.LastIndexByte(path, '/')+1:]; !strings.Contains(base, ".") {
		if ext == "" {
			ext = "flac"
			if fd.Type == mldf.TypeAudioWaveform {
				ext = "wav"
			}
		}
		path += "." + ext
	}
	return path, nil
}

// sortRow orders a row's values by column index, as the writer expects.
func sortRow(row parquet.Row) parquet.Row {
	for i := 1; i < len(row); i++ {
		for j := i; j > 0 && row[j].Column() < row[j-1].Column(); j-- {
			row[j], row[j-1] = row[j-1], row[j]
		}
	}
	return row
}

// fixed1D returns, for the arguments of a fixed-layout 1-D NDARRAY of a numeric dtype
// Parquet stores natively, a function giving the leaf type, the Hugging Face dtype and the
// length; else nil.
func fixed1D(args [mldf.ArgumentsSize]byte) func() (parquet.Type, string, uint64) {
	if args[0] != 1 || args[1] != encoders.NDArrayFixed || args[18] != 1 {
		return nil
	}
	n := binary.LittleEndian.Uint64(args[24:])
	switch strings.TrimRight(string(args[2:18]), "\x00") {
	case "<f4":
		return func() (parquet.Type, string, uint64) { return parquet.FloatType, "float32", n }
	case "<f8":
		return func() (parquet.Type, string, uint64) { return parquet.DoubleType, "float64", n }
	case "<i4":
		return func() (parquet.Type, string, uint64) { return parquet.Int32Type, "int32", n }
	case "<i8":
		return func() (parquet.Type, string, uint64) { return parquet.Int64Type, "int64", n }
	}
	return nil
}

// appendColumn appends field c of sample i as the values of its leaves, with their levels.
func appendColumn(row parquet.Row, r *mldf.Reader, i int, c *pqColumn, fd mldf.FieldDesc, key int) (parquet.Row, error) {
	wrap := func(err error) error { return fmt.Errorf("%s: %w", where(r, i, c.f), err) }
	null := func() parquet.Row {
		for _, l := range c.leaves {
			row = append(row, parquet.Value{}.Level(0, 0, l))
		}
		return row
	}
	switch c.kind {
	case pqInt:
		v, err := r.Int(i, c.f)
		if err != nil {
			return row, err
		}
		return append(row, parquet.Int64Value(v).Level(0, 1, c.leaves[0])), nil
	case pqFloat:
		v, err := r.Float(i, c.f)
		if err != nil {
			return row, err
		}
		return append(row, parquet.DoubleValue(v).Level(0, 1, c.leaves[0])), nil
	case pqBlob:
		b, ext, err := value(r, i, c.f, fd)
		if err != nil {
			return row, err
		}
		if b == nil {
			return null(), nil
		}
		// leaves: bytes, path (the schema orders group members by name)
		row = append(row, parquet.ByteArrayValue(b).Level(0, 2, c.leaves[0]))
		if key < 0 {
			return append(row, parquet.Value{}.Level(0, 1, c.leaves[1])), nil
		}
		path, err := keyPath(r, i, key, ext, fd)
		if err != nil || path == "" {
			return append(row, parquet.Value{}.Level(0, 1, c.leaves[1])), err
		}
		return append(row, parquet.ByteArrayValue([]byte(path)).Level(0, 2, c.leaves[1])), nil
	case pqIDs:
		m, p, err := r.Text(i, c.f)
		if err != nil {
			return row, err
		}
		if len(p) == 0 && m.Encoding == mldf.TextUTF8 {
			m.Encoding = mldf.TextTokens32
		}
		width := 4
		if m.Encoding == mldf.TextTokens16 {
			width = 2
		} else if m.Encoding != mldf.TextTokens32 {
			return row, wrap(fmt.Errorf("%w: text encoding %d holds no token ids", ErrValue, m.Encoding))
		}
		if len(p)%width != 0 {
			return row, wrap(fmt.Errorf("%w: %d bytes of %d-byte ids", ErrValue, len(p), width))
		}
		if len(p) == 0 {
			return append(row, parquet.Value{}.Level(0, 1, c.leaves[0])), nil
		}
		for k := 0; k < len(p); k += width {
			id := int64(binary.LittleEndian.Uint32(p[k:]))
			if width == 2 {
				id = int64(binary.LittleEndian.Uint16(p[k:]))
			}
			if id > math.MaxInt32 {
				return row, wrap(fmt.Errorf("%w: token id %d does not fit int32", ErrValue, id))
			}
			rep := 1
			if k == 0 {
				rep = 0
			}
			row = append(row, parquet.Int32Value(int32(id)).Level(rep, 2, c.leaves[0]))
		}
		return row, nil
	case pqList:
		p, err := r.Payload(i, c.f)
		if err != nil {
			return row, err
		}
		if len(p) == 0 {
			return null(), nil
		}
		leaf, _, n := fixed1D(fd.Arguments)()
		size := 4
		if leaf == parquet.DoubleType || leaf == parquet.Int64Type {
			size = 8
		}
		if uint64(len(p)) != n*uint64(size) {
			return row, wrap(fmt.Errorf("%w: %d bytes for %d elements of %d bytes", ErrValue, len(p), n, size))
		}
		for k := 0; k < len(p); k += size {
			var v parquet.Value
			switch leaf {
			case parquet.FloatType:
				v = parquet.FloatValue(math.Float32frombits(binary.LittleEndian.Uint32(p[k:])))
			case parquet.DoubleType:
				v = parquet.DoubleValue(math.Float64frombits(binary.LittleEndian.Uint64(p[k:])))
			case parquet.Int32Type:
				v = parquet.Int32Value(int32(binary.LittleEndian.Uint32(p[k:])))
			default:
				v = parquet.Int64Value(int64(binary.LittleEndian.Uint64(p[k:])))
			}
			rep := 1
			if k == 0 {
				rep = 0
			}
			row = append(row, v.Level(rep, 2, c.leaves[0]))
		}
		return row, nil
	}
	if c.kind == pqBinary { // BYTES as stored; NDARRAY as a .npy file
		b, _, err := value(r, i, c.f, fd)
		if err != nil {
			return row, err
		}
		if b == nil {
			return null(), nil
		}
		return append(row, parquet.ByteArrayValue(b).Level(0, 1, c.leaves[0])), nil
	}
	p, err := r.Payload(i, c.f)
	if err != nil {
		return row, err
	}
	if len(p) == 0 && c.kind != pqString {
		return null(), nil
	}
	return append(row, parquet.ByteArrayValue(p).Level(0, 1, c.leaves[0])), nil
}
