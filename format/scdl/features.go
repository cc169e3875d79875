package scdl

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/mldf/convert/internal/pqfile"
	"github.com/mldf/convert/pagewriter"
)

// A feature index directory holds its blocks as parquet tables (what pyarrow's
// pq.write_table writes for BioNeMo: one column per feature, snappy-compressed; every column
// optional, so missing values are nulls), the cumulative row count after each block, one
// label per block and the library version.

// orderedGroup is a parquet group whose columns keep the table's order (parquet.Group sorts
// them by name; pandas keeps its column order, and so do we).
type orderedGroup struct {
	parquet.Group
	fields []parquet.Field
}

func (g orderedGroup) Fields() []parquet.Field              { return g.fields }
func (g orderedGroup) Encoding() encoding.Encoding          { return nil }
func (g orderedGroup) Compression() compress.Codec          { return nil }
func (g orderedGroup) String() string                       { return fmt.Sprintf("group(%d fields)", len(g.fields)) }
func (g orderedGroup) GoType() reflect.Type                 { return reflect.TypeOf(map[string]any{}) }
func (g orderedGroup) Type() parquet.Type                   { return parquet.Group{}.Type() }
func (g orderedGroup) Leaf() bool                           { return false }
func (g orderedGroup) Required() bool                       { return true }
func (g orderedGroup) Optional() bool                       { return false }
func (g orderedGroup) Repeated() bool                       { return false }
func (g orderedGroup) ID() int                              { return 0 }
func (f namedField) Name() string                           { return f.name }
func (f namedField) Value(base reflect.Value) reflect.Value { return reflect.Value{} }

type namedField struct {
	parquet.Node
	name string
}

func leafFor(k Kind) parquet.Node {
	switch k {
	case KindInt:
		return parquet.Int(64)
	case KindFloat:
		return parquet.Leaf(parquet.DoubleType)
	case KindBool:
		return parquet.Leaf(parquet.BooleanType)
	}
	return parquet.String()
}

func schemaOf(specs []ColumnSpec) *parquet.Schema {
	g := orderedGroup{}
	for _, s := range specs {
		g.fields = append(g.fields, namedField{Node: parquet.Optional(leafFor(s.Kind)), name: s.Name})
	}
	return parquet.NewSchema("schema", g)
}

// tableWriter streams rows into one parquet file.
type tableWriter struct {
	f     *os.File
	bw    *bufio.Writer
	w     *parquet.GenericWriter[any]
	specs []ColumnSpec
	rows  int64
	buf   []parquet.Row
}

// rowGroupRows bounds the rows the parquet writer buffers before it writes a row group.
const rowGroupRows = 1 << 17

func createTable(path string, specs []ColumnSpec) (*tableWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	t := &tableWriter{f: f, bw: bufio.NewWriterSize(f, 1<<20), specs: specs}
	t.w = parquet.NewGenericWriter[any](t.bw, schemaOf(specs), parquet.Compression(&snappy.Codec{}),
		parquet.MaxRowsPerRowGroup(rowGroupRows), parquet.CreatedBy("convert", LibraryVersion, ""))
	return t, nil
}

// append writes the rows of cols (in t's column order, converted to t's kinds).
func (t *tableWriter) append(cols []Column) error {
	n := 0
	if len(cols) > 0 {
		n = cols[0].Len()
	}
	if len(cols) != len(t.specs) {
		return fmt.Errorf("%w: %d columns for a table of %d", ErrInput, len(cols), len(t.specs))
	}
	t.buf = slices.Grow(t.buf[:0], n)[:n]
	for r := range n {
		row := t.buf[r][:0]
		for c := range cols {
			row = append(row, columnValue(&cols[c], r, t.specs[c].Kind).Level(0, definition(&cols[c], r), c))
		}
		t.buf[r] = row
	}
	if _, err := t.w.WriteRows(t.buf); err != nil {
		return err
	}
	t.rows += int64(n)
	return nil
}

// definition is the parquet definition level of value r: 0 for a missing value, and for a
// float NaN (pyarrow's from_pandas conversion, which BioNeMo uses, stores NaN as null).
func definition(c *Column, r int) int {
	if c.IsNull(r) || (c.Kind == KindFloat && c.Floats[r] != c.Floats[r]) {
		return 0
	}
	return 1
}

// columnValue returns value r of c as a parquet value of kind k.
func columnValue(c *Column, r int, k Kind) parquet.Value {
	if definition(c, r) == 0 {
		return parquet.NullValue()
	}
	switch k {
	case KindInt:
		if c.Kind == KindBool {
			if c.Bools[r] {
				return parquet.Int64Value(1)
			}
			return parquet.Int64Value(0)
		}
		return parquet.Int64Value(c.Ints[r])
	case KindFloat:
		return parquet.DoubleValue(c.Float(r))
	case KindBool:
		return parquet.BooleanValue(c.Bools[r])
	}
	return parquet.ByteArrayValue([]byte(c.Text(r)))
}

func (t *tableWriter) close() error {
	err := t.w.Close()
	if err == nil {
		err = t.bw.Flush()
	}
	if err == nil {
		err = t.f.Sync()
	}
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// abort closes the file without finishing it.
func (t *tableWriter) abort() { t.f.Close() }

// featureIndex builds one feature index directory block by block.
type featureIndex struct {
	dir    string // the directory, inside the temporary archive
	name   string // var_features or obs_features
	cumsum []int64
	labels []string
	tmp    []string // block files, named for renaming at the end
}

func newFeatureIndex(root, name string) (*featureIndex, error) {
	fi := &featureIndex{dir: filepath.Join(root, name), name: name, cumsum: []int64{-1}}
	return fi, os.MkdirAll(fi.dir, 0o755)
}

// blockPath returns the temporary path of block i (renamed by finish once the number of
// blocks, and so the digits of the names, is known).
func (fi *featureIndex) blockPath(i int) string {
	return filepath.Join(fi.dir, fmt.Sprintf(".block-%d.parquet", i))
}

// addBlock records a new block of rows cells with the given label; its table is written by
// the caller to blockPath(len(fi.labels)-1).
func (fi *featureIndex) addBlock(rows int64, label string) {
	fi.cumsum = append(fi.cumsum, fi.rowsSoFar()+rows)
	fi.labels = append(fi.labels, label)
	fi.tmp = append(fi.tmp, fi.blockPath(len(fi.labels)-1))
}

// extend adds rows cells to the last block.
func (fi *featureIndex) extend(rows int64) { fi.cumsum[len(fi.cumsum)-1] += rows }

func (fi *featureIndex) rowsSoFar() int64 { return max(fi.cumsum[len(fi.cumsum)-1], 0) }

// files returns the index's files as the header lists them, relative to the archive: the
// list BioNeMo's _write_header builds (labels.npy, not labels.json, which it does not list).
func (fi *featureIndex) files() []string {
	files := []string{fi.name + "/" + CumSumFile, fi.name + "/" + LabelsNPYFile, fi.name + "/" + FeatureVersionFile}
	for i := range fi.labels {
		files = append(files, fi.name+"/"+blockName(i, len(fi.labels)))
	}
	return files
}

// blockName is BioNeMo's dataframe_{i:0{digits}d}.parquet, digits those of the block count.
func blockName(i, n int) string {
	return fmt.Sprintf("dataframe_%0*d.parquet", len(fmt.Sprint(n)), i)
}

// finish renames the block files and writes the index's small files.
func (fi *featureIndex) finish() error {
	for i, p := range fi.tmp {
		if err := os.Rename(p, filepath.Join(fi.dir, blockName(i, len(fi.tmp)))); err != nil {
			return err
		}
	}
	labels := make([]string, len(fi.labels))
	for i, l := range fi.labels {
		b, _ := json.Marshal(l)
		labels[i] = string(b)
	}
	// json.dump's default separators: "[\"a\", \"b\"]".
	if err := writeFileSync(filepath.Join(fi.dir, LabelsFile), []byte("["+strings.Join(labels, ", ")+"]")); err != nil {
		return err
	}
	// bionemo-scdl 0.1.x loads labels.npy (np.load, allow_pickle=True); newer BioNeMo loads
	// labels.json when present. A '<U<n>' array holds no pickle for either to run.
	if err := writeFileSync(filepath.Join(fi.dir, LabelsNPYFile), encodeLabelsNPY(fi.labels)); err != nil {
		return err
	}
	if err := writeFileSync(filepath.Join(fi.dir, CumSumFile), encodeInt64NPY(fi.cumsum)); err != nil {
		return err
	}
	if err := writeFileSync(filepath.Join(fi.dir, FeatureVersionFile), encodeStringNPY(LibraryVersion)); err != nil {
		return err
	}
	return pagewriter.SyncDir(fi.dir)
}

func (fi *featureIndex) info() FeatureIndexInfo {
	return FeatureIndexInfo{Name: fi.name, Length: uint64(fi.rowsSoFar()), DType: String, Files: fi.files()}
}

func writeFileSync(path string, b []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Table is a feature table read back from an archive: its columns with all their values.
type Table struct {
	Columns []Column
	Rows    int64
}

// readTable reads a whole parquet feature table (small tables: a var block, or a test's).
func readTable(b FeatureBlock) (*Table, error) {
	f, size, err := b.open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pt, err := pqfile.OpenTable(f, size, b.File)
	if err != nil {
		return nil, err
	}
	pf := pt.PF()
	t := &Table{Rows: pf.NumRows()}
	fields := pf.Schema().Fields()
	for _, fd := range fields {
		spec := ColumnSpec{Name: fd.Name(), Kind: KindString}
		if fd.Leaf() {
			switch fd.Type().Kind() {
			case parquet.Int32, parquet.Int64:
				spec.Kind = KindInt
			case parquet.Float, parquet.Double:
				spec.Kind = KindFloat
			case parquet.Boolean:
				spec.Kind = KindBool
			}
		}
		t.Columns = append(t.Columns, Column{ColumnSpec: spec})
	}
	r := parquet.NewReader(pf)
	defer r.Close()
	rows := make([]parquet.Row, 256)
	for {
		n, err := r.ReadRows(rows)
		for _, row := range rows[:n] {
			for _, v := range row {
				c := v.Column()
				if c < 0 || c >= len(t.Columns) {
					continue
				}
				addValue(&t.Columns[c], v)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.File, err)
		}
	}
	return t, nil
}

func addValue(c *Column, v parquet.Value) {
	null := v.IsNull()
	if null && c.Null == nil {
		c.Null = make([]bool, c.Len(), c.Len()+1)
	}
	if c.Null != nil {
		c.Null = append(c.Null, null)
	}
	switch c.Kind {
	case KindInt:
		x := int64(0)
		if !null {
			x = v.Int64()
		}
		c.Ints = append(c.Ints, x)
	case KindFloat:
		x := nan
		if !null {
			x = v.Double()
		}
		c.Floats = append(c.Floats, x)
	case KindBool:
		c.Bools = append(c.Bools, !null && v.Boolean())
	default:
		s := ""
		if !null {
			s = string(v.ByteArray())
		}
		c.Strings = append(c.Strings, s)
	}
}
