package scdl

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/internal/pqfile"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/objstore"
)

// Reader reads an SCDL archive (MEMMAP_V0 backend). Open checks the header and everything
// that is cheap to check (sizes, counts, the feature indices); Verify also scans the arrays.
// Its methods may be called from many goroutines.
type Reader struct {
	dir    string
	ar     archive // where the members are read
	hdr    *Header
	data   memberFile
	rowptr memberFile
	colptr memberFile

	dataType, rowType, colType DType
	rows, nnz                  int64
	noHeader                   bool // no header.sch: the dtypes are BioNeMo's defaults

	Var, Obs *FeatureIndex // nil when the archive has none
}

// FeatureIndex is a feature index directory as read back.
type FeatureIndex struct {
	Name   string
	Blocks []FeatureBlock
}

// FeatureBlock is one block: rows [Start, End) of the archive share its table.
type FeatureBlock struct {
	Start, End int64
	Label      string
	File       string // the parquet file's path
	TableRows  int64  // rows in the parquet table (genes for var, cells for obs)
	Columns    []ColumnSpec

	ar     *archive // the archive; nil for a block built by hand (tests)
	member string   // File relative to the archive
}

// Block returns the index of the block holding row, or -1.
func (f *FeatureIndex) Block(row int64) int {
	i := sort.Search(len(f.Blocks), func(i int) bool { return f.Blocks[i].End > row })
	if i == len(f.Blocks) || row < f.Blocks[i].Start {
		return -1
	}
	return i
}

// Open opens the archive in dir and validates it as far as that is cheap: every rule of the
// header (ParseHeader), the arrays present with their files of the sizes the header says,
// metadata.json, and the feature indices (cumulative row counts, labels, parquet tables).
func Open(dir string) (*Reader, error) {
	return openArchive(archive{dir: dir})
}

// OpenStore opens the archive named dir through c: a local directory as Open does, or an
// archive in a bucket (dir a URL of its prefix, such as s3://bucket/x.scdl), whose members
// are read with ranged requests under ctx (each array read by Verify or Row is fetched as it
// is read, not downloaded first). The checks are Open's.
func OpenStore(ctx context.Context, c *objstore.Client, dir string) (*Reader, error) {
	if local, ok := objstore.FolderOf(dir).Dir(); ok { // os.Root's rules need the directory
		return Open(local)
	}
	return openArchive(archive{dir: strings.TrimSuffix(dir, "/"), store: c, ctx: ctx})
}

func openArchive(a archive) (*Reader, error) {
	r := &Reader{dir: a.dir, ar: a}
	if err := r.open(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// IsArchive reports whether path is a directory with an SCDL header file.
func IsArchive(path string) bool {
	fi, err := os.Stat(filepath.Join(path, HeaderFile))
	return err == nil && fi.Mode().IsRegular()
}

// ErrNotArchive means a directory holds none of the files of an SCDL archive.
var ErrNotArchive = errors.New("not an SCDL archive")

// numpyDTypes maps numpy's dtype names (dtypes.json, written by older BioNeMo code) to DTypes.
var numpyDTypes = map[string]DType{"uint8": Uint8, "uint16": Uint16, "uint32": Uint32, "uint64": Uint64,
	"float16": Float16, "float32": Float32, "float64": Float64}

// DTypesFile is the optional map of array file names to numpy dtype names that older
// BioNeMo code wrote; BioNeMo reads it when there is no header.
const DTypesFile = "dtypes.json"

// headerless builds the header of an archive without header.sch as BioNeMo loads one: the
// dtypes from dtypes.json when present, otherwise BioNeMo's defaults (data float32, col_ptr
// uint32, row_ptr uint64); the array lengths from the file sizes; the feature directories
// that exist.
func (r *Reader) headerless() (*Header, error) {
	var missing []string
	for _, f := range []string{MetadataFile, DataFile, RowPtrFile, ColPtrFile} {
		if !r.ar.exists(f) {
			missing = append(missing, f)
		}
	}
	if len(missing) == 4 {
		return nil, fmt.Errorf("%s: %w: the directory has none of %s, %s, %s, %s, %s", r.dir, ErrNotArchive,
			HeaderFile, MetadataFile, DataFile, RowPtrFile, ColPtrFile)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: %w", r.dir, ruleErr("files present", r.dir, "no %s and no %s (an archive without a header needs %s, %s, %s and %s)",
			HeaderFile, strings.Join(missing, ", "), MetadataFile, DataFile, RowPtrFile, ColPtrFile))
	}
	dt := map[string]DType{DataFile: Float32, ColPtrFile: Uint32, RowPtrFile: Uint64}
	if r.ar.exists(DTypesFile) {
		b, err := r.ar.read(DTypesFile, MaxSmallFile)
		if err != nil {
			return nil, err
		}
		var m map[string]string
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", r.dir, ruleErr("dtypes", DTypesFile, "%v", err))
		}
		for f := range dt {
			if name, ok := m[f]; ok {
				d, ok := numpyDTypes[name]
				if !ok {
					return nil, fmt.Errorf("%s: %w", r.dir, ruleErr("dtypes", DTypesFile, "%s: unknown dtype %s", f, quote.Q(name)))
				}
				dt[f] = d
			}
		}
	}
	h := &Header{Backend: BackendMemmapV0}
	for _, name := range []string{ArrayData, ArrayRowPtr, ArrayColPtr} {
		f, size, err := r.ar.open(arrayFiles[name])
		if err != nil {
			return nil, err
		}
		f.Close()
		d := dt[arrayFiles[name]]
		n := uint64(size) / uint64(d.Size())
		if uint64(size)%uint64(d.Size()) != 0 {
			return nil, fmt.Errorf("%s: %w", r.dir, ruleErr("array length", fmt.Sprintf("%s (%s)", name, arrayFiles[name]),
				"no %s: %d bytes are not a whole number of %s elements", HeaderFile, size, d))
		}
		h.Arrays = append(h.Arrays, ArrayInfo{Name: name, Length: n, DType: d})
	}
	for _, name := range []string{VarFeatures, ObsFeatures, "features"} {
		if r.ar.exists(name) {
			h.Features = append(h.Features, FeatureIndexInfo{Name: name, Length: lengthUnknown, DType: String})
		}
	}
	return h, nil
}

// lengthUnknown is the length of a feature index of a headerless archive: no header states it.
const lengthUnknown = math.MaxUint64

// HasHeader reports whether the archive has header.sch (BioNeMo loads archives without one,
// with default dtypes; Header then returns the header that was assumed).
func (r *Reader) HasHeader() bool { return !r.noHeader }

func (r *Reader) open() error {
	b, err := r.ar.read(HeaderFile, maxHeaderSize)
	switch {
	case err == nil:
		if r.hdr, err = ParseHeader(b); err != nil {
			return fmt.Errorf("%s: %w", r.dir, err)
		}
	case errors.Is(err, fs.ErrNotExist) && !r.ar.exists(HeaderFile):
		if r.hdr, err = r.headerless(); err != nil {
			return err
		}
		r.noHeader = true
	default:
		return err
	}
	if r.hdr.Backend != BackendMemmapV0 {
		return fmt.Errorf("%s: %w: backend %s (this reader reads MEMMAP_V0 archives)", r.dir, ErrUnsupported, r.hdr.Backend)
	}
	for _, a := range r.hdr.Arrays {
		if _, ok := arrayFiles[a.Name]; !ok {
			return fmt.Errorf("%s: %w", r.dir, ruleErr("array names", HeaderFile, "unknown array %q (BioNeMo knows DATA, ROWPTR, COLPTR)", a.Name))
		}
	}
	arr := func(name string, numeric bool) (*ArrayInfo, memberFile, error) {
		a := r.hdr.Array(name)
		where := fmt.Sprintf("%s (%s)", name, arrayFiles[name])
		if a == nil {
			return nil, nil, ruleErr("arrays present", HeaderFile, "no %s array", name)
		}
		if a.DType.Size() == 0 || (!numeric && a.DType >= Float16) {
			return nil, nil, ruleErr("dtype", where, "dtype %s", a.DType)
		}
		if a.Shape != nil && (len(a.Shape) != 1 || uint64(a.Shape[0]) != a.Length) {
			return nil, nil, ruleErr("shape", where, "shape %v for %d elements", a.Shape, a.Length)
		}
		f, size, err := r.ar.open(arrayFiles[name])
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, nil, ruleErr("array file", where, "%v", err)
			}
			return nil, nil, err
		}
		if a.Length > math.MaxInt64/8 || size != int64(a.Length)*int64(a.DType.Size()) {
			f.Close()
			return nil, nil, ruleErr("array length", where, "file has %d bytes, the header says %d %s elements (%d bytes)",
				size, a.Length, a.DType, a.Length*uint64(a.DType.Size()))
		}
		return a, f, nil
	}
	wrap := func(err error) error {
		var re *RuleError
		if errors.As(err, &re) {
			return fmt.Errorf("%s: %w", r.dir, err)
		}
		return err // already names the archive
	}
	da, df, err := arr(ArrayData, true)
	if err != nil {
		return wrap(err)
	}
	r.data, r.dataType = df, da.DType
	ra, rf, err := arr(ArrayRowPtr, false)
	if err != nil {
		return wrap(err)
	}
	r.rowptr, r.rowType = rf, ra.DType
	ca, cf, err := arr(ArrayColPtr, false)
	if err != nil {
		return wrap(err)
	}
	r.colptr, r.colType = cf, ca.DType
	if ra.Length == 0 {
		return fmt.Errorf("%s: %w", r.dir, ruleErr("row_ptr length", "ROWPTR (row_ptr.npy)", "empty: it holds cells+1 offsets"))
	}
	if ca.Length != da.Length {
		return fmt.Errorf("%s: %w", r.dir, ruleErr("nnz", "COLPTR (col_ptr.npy)", "%d elements, DATA has %d", ca.Length, da.Length))
	}
	r.rows, r.nnz = int64(ra.Length-1), int64(da.Length)

	mb, err := r.ar.read(MetadataFile, MaxSmallFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w", r.dir, ruleErr("metadata", MetadataFile, "%v", err))
		}
		return err
	}
	var meta struct {
		NumRows *int64 `json:"num_rows"`
	}
	if err := json.Unmarshal(mb, &meta); err != nil || meta.NumRows == nil {
		return fmt.Errorf("%s: %w", r.dir, ruleErr("metadata", MetadataFile, "no num_rows (%v)", err))
	}
	if *meta.NumRows != r.rows {
		return fmt.Errorf("%s: %w", r.dir, ruleErr("num_rows", MetadataFile, "num_rows %d, ROWPTR holds %d cells", *meta.NumRows, r.rows))
	}
	for _, fi := range r.hdr.Features {
		idx, err := r.openIndex(fi)
		if err != nil {
			return wrap(err)
		}
		switch fi.Name {
		case VarFeatures, "features":
			if r.Var == nil {
				r.Var = idx
			}
		case ObsFeatures:
			r.Obs = idx
		}
	}
	if r.Var != nil {
		last := r.Var.Blocks
		if len(last) == 0 || last[len(last)-1].End != r.rows {
			end := int64(0)
			if len(last) > 0 {
				end = last[len(last)-1].End
			}
			return fmt.Errorf("%s: %w", r.dir, ruleErr("var rows", r.Var.Name+"/"+CumSumFile, "covers %d cells, the arrays hold %d", end, r.rows))
		}
	}
	if r.Obs != nil && len(r.Obs.Blocks) > 0 && r.Obs.Blocks[len(r.Obs.Blocks)-1].End != r.rows {
		return fmt.Errorf("%s: %w", r.dir, ruleErr("obs rows", ObsFeatures+"/"+CumSumFile, "covers %d cells, the arrays hold %d",
			r.Obs.Blocks[len(r.Obs.Blocks)-1].End, r.rows))
	}
	return nil
}

// listTables lists the parquet tables of a feature index directory, sorted (BioNeMo loads
// *.parquet in sorted order), as paths relative to the archive.
func (r *Reader) listTables(name string) ([]string, error) {
	names, err := r.ar.list(name)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, ".parquet") {
			out = append(out, name+"/"+n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// openIndex reads a feature index directory's small files and its tables' footers.
func (r *Reader) openIndex(fi FeatureIndexInfo) (*FeatureIndex, error) {
	for _, p := range fi.Files {
		if filepath.IsAbs(p) || strings.Contains(p, "..") {
			return nil, ruleErr("index files", HeaderFile, "feature index %q names %q outside the archive", fi.Name, p)
		}
		f, _, err := r.ar.open(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, ruleErr("index files", fi.Name, "the header lists %s: %v", p, err)
			}
			return nil, err
		}
		f.Close()
	}
	where := fi.Name + "/" + CumSumFile
	cb, err := r.ar.read(where, MaxIndexFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ruleErr("feature index files", where, "%v", err)
		}
		return nil, err
	}
	cum, err := decodeInt64NPY(cb, where)
	if err != nil {
		return nil, err
	}
	if len(cum) == 0 || cum[0] != -1 {
		return nil, ruleErr("cumulative sum", where, "must start with -1, got %v", cum[:min(len(cum), 3)])
	}
	labels, err := r.readLabels(fi.Name)
	if err != nil {
		return nil, err
	}
	tables, err := r.listTables(fi.Name)
	if err != nil {
		return nil, err
	}
	nb := len(cum) - 1
	if len(labels) != nb || len(tables) != nb {
		return nil, ruleErr("blocks", fi.Name, "%d cumulative counts, %d labels, %d parquet tables", nb, len(labels), len(tables))
	}
	idx := &FeatureIndex{Name: fi.Name}
	start := int64(0)
	for i := range nb {
		if cum[i+1] <= start && !(i == 0 && cum[1] == 0) {
			return nil, ruleErr("cumulative sum", where, "not increasing at block %d (%d after %d)", i, cum[i+1], start)
		}
		b := FeatureBlock{Start: start, End: cum[i+1], File: memberName(r.ar, tables[i]), ar: &r.ar, member: tables[i]}
		if labels[i] != nil {
			b.Label = *labels[i]
		}
		if b.TableRows, b.Columns, err = tableInfo(b); err != nil {
			var me *RuleError
			if errors.Is(err, ErrMember) || errors.As(err, &me) {
				return nil, err
			}
			return nil, ruleErr("parquet", tables[i], "%v", err)
		}
		if fi.Name == ObsFeatures && b.TableRows != b.End-b.Start {
			return nil, ruleErr("obs rows", tables[i], "%d rows for cells [%d, %d)", b.TableRows, b.Start, b.End)
		}
		idx.Blocks = append(idx.Blocks, b)
		start = b.End
	}
	if fi.Length != lengthUnknown && uint64(start) != fi.Length {
		return nil, ruleErr("feature index length", HeaderFile, "feature index %q: header says %d rows, %s says %d", fi.Name, fi.Length, CumSumFile, start)
	}
	return idx, nil
}

// readLabels reads a feature index's block labels: labels.json when the index has it (what
// newer BioNeMo reads first), else labels.npy (what bionemo-scdl 0.1.x reads), decoded
// without pickle. When both are present they must hold the same labels, so that every
// BioNeMo version sees the same ones. A nil label is JSON's null.
func (r *Reader) readLabels(name string) ([]*string, error) {
	jsonPath, npyPath := name+"/"+LabelsFile, name+"/"+LabelsNPYFile
	hasJSON, hasNPY := r.ar.exists(jsonPath), r.ar.exists(npyPath)
	if !hasJSON && !hasNPY {
		return nil, ruleErr("feature index files", name, "neither %s nor %s exists", LabelsFile, LabelsNPYFile)
	}
	var fromJSON []*string
	if hasJSON {
		b, err := r.ar.read(jsonPath, MaxIndexFile)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &fromJSON); err != nil {
			return nil, ruleErr("labels", jsonPath, "%v", err)
		}
		if !hasNPY {
			return fromJSON, nil
		}
	}
	b, err := r.ar.read(npyPath, MaxIndexFile)
	if err != nil {
		return nil, err
	}
	fromNPY, err := decodeLabelsNPY(b, npyPath)
	if err != nil {
		return nil, err
	}
	if !hasJSON {
		labels := make([]*string, len(fromNPY))
		for i := range fromNPY {
			labels[i] = &fromNPY[i]
		}
		return labels, nil
	}
	if len(fromJSON) != len(fromNPY) {
		return nil, ruleErr("labels", name, "%s holds %d labels, %s %d", LabelsFile, len(fromJSON), LabelsNPYFile, len(fromNPY))
	}
	for i, l := range fromJSON {
		if l == nil || *l != fromNPY[i] {
			j := "null"
			if l != nil {
				j = quote.Q(*l)
			}
			return nil, ruleErr("labels", name, "block %d: %s says %s, %s says %s", i, LabelsFile, j, LabelsNPYFile, quote.Q(fromNPY[i]))
		}
	}
	return fromJSON, nil
}

// open opens the block's table file (see archive.open) and returns its size.
func (b FeatureBlock) open() (memberFile, int64, error) {
	if b.ar == nil { // a block built by hand (tests): its path alone
		f, st, err := inputfile.OpenRegular(b.File)
		if err != nil {
			return nil, 0, err
		}
		return f, st.Size(), nil
	}
	return b.ar.open(b.member)
}

// memberName names the member rel for messages: its path in a local archive, its URL in a
// bucket.
func memberName(a archive, rel string) string {
	if a.store == nil {
		return filepath.Join(a.dir, filepath.FromSlash(rel))
	}
	return a.dir + "/" + rel
}

func tableInfo(b FeatureBlock) (int64, []ColumnSpec, error) {
	f, size, err := b.open()
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	t, err := pqfile.OpenTable(f, size, b.File)
	if err != nil {
		return 0, nil, err
	}
	pf := t.PF()
	var specs []ColumnSpec
	for _, fd := range pf.Schema().Fields() {
		k := KindString
		if fd.Leaf() {
			switch fd.Type().Kind() {
			case parquet.Int32, parquet.Int64:
				k = KindInt
			case parquet.Float, parquet.Double:
				k = KindFloat
			case parquet.Boolean:
				k = KindBool
			}
		}
		specs = append(specs, ColumnSpec{Name: fd.Name(), Kind: k})
	}
	return pf.NumRows(), specs, nil
}

// Close closes the array files.
func (r *Reader) Close() error {
	var errs []error
	for _, f := range []memberFile{r.data, r.rowptr, r.colptr} {
		if f != nil {
			errs = append(errs, f.Close())
		}
	}
	return errors.Join(errs...)
}

// Dir returns the archive's directory.
func (r *Reader) Dir() string { return r.dir }

// Header returns the parsed header.
func (r *Reader) Header() *Header { return r.hdr }

// NumRows returns the number of cells.
func (r *Reader) NumRows() int64 { return r.rows }

// NNZ returns the number of stored values.
func (r *Reader) NNZ() int64 { return r.nnz }

// DTypes returns the dtypes of data, row_ptr and col_ptr.
func (r *Reader) DTypes() (data, rowptr, colptr DType) { return r.dataType, r.rowType, r.colType }

// Genes returns the number of genes of row's var block (0 without var features).
func (r *Reader) Genes(row int64) int64 {
	if r.Var == nil {
		return 0
	}
	if b := r.Var.Block(row); b >= 0 {
		return r.Var.Blocks[b].TableRows
	}
	return 0
}

// MaxGenes returns the largest var block's gene count.
func (r *Reader) MaxGenes() int64 {
	var n int64
	if r.Var != nil {
		for _, b := range r.Var.Blocks {
			n = max(n, b.TableRows)
		}
	}
	return n
}

func getUint(b []byte, t DType) uint64 {
	switch t {
	case Uint8:
		return uint64(b[0])
	case Uint16:
		return uint64(binary.LittleEndian.Uint16(b))
	case Uint32:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

func getFloat(b []byte, t DType) float32 {
	switch t {
	case Float32:
		return math.Float32frombits(binary.LittleEndian.Uint32(b))
	case Float64:
		return float32(math.Float64frombits(binary.LittleEndian.Uint64(b)))
	case Float16:
		return halfToFloat(binary.LittleEndian.Uint16(b))
	}
	return float32(getUint(b, t))
}

func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h & 0x3ff)
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		f := float32(frac) / 1024 / 16384
		if sign != 0 {
			return -f
		}
		return f
	case exp == 31:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
}

// The array rules, applied by Verify to the whole archive and by Row and ReadRows to the
// cells they read (so a conversion never emits a cell that verify would refuse). They are
// stated once, here.

const rowWhere, colWhere = "ROWPTR (row_ptr.npy)", "COLPTR (col_ptr.npy)"

// maxReadValues bounds the values one ReadRows call holds in memory.
const maxReadValues = 1 << 27

// pieceValues is how many values are read from data and col_ptr at once.
const pieceValues = 1 << 16

// checkRowPtrStart applies "row_ptr starts at 0" to row_ptr[0].
func (r *Reader) checkRowPtrStart(p uint64) error {
	if p != 0 {
		return ruleErr("row_ptr starts at 0", rowWhere, "row_ptr[0] = %d", p)
	}
	return nil
}

// checkRowPtrEnd applies "row_ptr ends at nnz" to row_ptr[cells].
func (r *Reader) checkRowPtrEnd(p uint64) error {
	if p != uint64(r.nnz) {
		return ruleErr("row_ptr ends at nnz", rowWhere, "row_ptr[%d] = %d, nnz is %d", r.rows, p, r.nnz)
	}
	return nil
}

// cellRules applies the rules of one cell: its row pointers and its gene indices against
// the gene count of its var block.
type cellRules struct {
	r          *Reader
	start, end int64  // the var block cached
	genes      uint64 // its gene count; MaxUint64 without var features
}

func (r *Reader) cellRules() *cellRules {
	return &cellRules{r: r, start: 1, end: 0, genes: math.MaxUint64}
}

// genesOf returns the gene count of cell i.
func (c *cellRules) genesOf(i int64) uint64 {
	if c.r.Var == nil {
		return math.MaxUint64
	}
	if i < c.start || i >= c.end {
		b := c.r.Var.Block(i)
		if b < 0 { // Open checked that the var blocks cover every cell
			return 0
		}
		blk := c.r.Var.Blocks[b]
		c.start, c.end, c.genes = blk.Start, blk.End, uint64(max(blk.TableRows, 0))
	}
	return c.genes
}

// span checks cell i's row pointers lo = row_ptr[i] and hi = row_ptr[i+1].
func (c *cellRules) span(i int64, lo, hi uint64) error {
	switch {
	case hi < lo:
		return ruleErr("row_ptr monotonic", rowWhere, "row_ptr[%d] = %d < row_ptr[%d] = %d", i+1, hi, i, lo)
	case hi > uint64(c.r.nnz):
		return ruleErr("row_ptr within nnz", rowWhere, "row_ptr[%d] = %d > nnz %d", i+1, hi, c.r.nnz)
	}
	if g := c.genesOf(i); hi-lo > g {
		return ruleErr("values per cell", rowWhere, "cell %d spans [%d, %d): %d values for %d genes", i, lo, hi, hi-lo, g)
	}
	if hi-lo > MaxCellValues {
		return fmt.Errorf("%w: cell %d holds %d values, more than the %d this reader accepts", ErrUnsupported, i, hi-lo, MaxCellValues)
	}
	return nil
}

// gene checks the gene index g stored at col_ptr[k] for cell i.
func (c *cellRules) gene(i int64, k, g uint64) error {
	if genes := c.genesOf(i); g >= genes {
		return ruleErr("column index < genes", colWhere, "col_ptr[%d] = %d for cell %d, which has %d genes", k, g, i, genes)
	}
	if g > math.MaxUint32 {
		return fmt.Errorf("%w: col_ptr[%d] = %d for cell %d: gene indices above 2^32-1 are not supported", ErrUnsupported, k, g, i)
	}
	return nil
}

// Row appends cell i's values and gene indices to vals and cols and returns them.
func (r *Reader) Row(i int64, vals []float32, cols []uint32) ([]float32, []uint32, error) {
	if i < 0 || i >= r.rows {
		return vals, cols, fmt.Errorf("%s: cell %d out of range [0, %d)", r.dir, i, r.rows)
	}
	b := Block{Indptr: []int64{0}, Vals: vals, Cols: cols}
	err := r.readCells(i, i+1, &b)
	return b.Vals, b.Cols, err
}

// readCells appends cells [lo, hi) to b: their offsets (relative to row_ptr[lo]) to
// b.Indptr, their values and gene indices to b.Vals and b.Cols. Every rule Verify applies
// to these cells is applied first to their row pointers, then to each gene index as it is
// read; data and col_ptr are read in pieces of pieceValues.
func (r *Reader) readCells(lo, hi int64, b *Block) error {
	if lo < 0 || hi > r.rows || lo > hi {
		return fmt.Errorf("%s: cells [%d, %d) of %d", r.dir, lo, hi, r.rows)
	}
	rs := int64(r.rowType.Size())
	pb := make([]byte, (hi-lo+1)*rs)
	if _, err := r.rowptr.ReadAt(pb, lo*rs); err != nil {
		return fmt.Errorf("%s: %s: %w", r.dir, RowPtrFile, err)
	}
	ptr := func(i int64) uint64 { return getUint(pb[(i-lo)*rs:], r.rowType) }
	fail := func(err error) error { return fmt.Errorf("%s: %w", r.dir, err) }
	if lo == 0 {
		if err := r.checkRowPtrStart(ptr(0)); err != nil {
			return fail(err)
		}
	}
	rules := r.cellRules()
	for i := lo; i < hi; i++ {
		if err := rules.span(i, ptr(i), ptr(i+1)); err != nil {
			return fail(err)
		}
	}
	if hi == r.rows {
		if err := r.checkRowPtrEnd(ptr(hi)); err != nil {
			return fail(err)
		}
	}
	p0, pn := ptr(lo), ptr(hi)
	if pn-p0 > maxReadValues {
		return fmt.Errorf("%s: %w: cells [%d, %d) hold %d values, more than the %d read at once", r.dir, ErrUnsupported, lo, hi, pn-p0, maxReadValues)
	}
	for i := lo + 1; i <= hi; i++ {
		b.Indptr = append(b.Indptr, int64(ptr(i)-p0))
	}
	ds, cs := uint64(r.dataType.Size()), uint64(r.colType.Size())
	buf := make([]byte, min(pn-p0, pieceValues)*max(ds, cs))
	cell := lo
	for k := p0; k < pn; {
		n := min(pn-k, pieceValues)
		if _, err := r.data.ReadAt(buf[:n*ds], int64(k*ds)); err != nil {
			return fmt.Errorf("%s: %s: %w", r.dir, DataFile, err)
		}
		for j := range n {
			b.Vals = append(b.Vals, getFloat(buf[j*ds:], r.dataType))
		}
		if _, err := r.colptr.ReadAt(buf[:n*cs], int64(k*cs)); err != nil {
			return fmt.Errorf("%s: %s: %w", r.dir, ColPtrFile, err)
		}
		for j := range n {
			for k+j >= ptr(cell+1) {
				cell++
			}
			g := getUint(buf[j*cs:], r.colType)
			if err := rules.gene(cell, k+j, g); err != nil {
				return fail(err)
			}
			b.Cols = append(b.Cols, uint32(g))
		}
		k += n
	}
	return nil
}

// Values returns the number of values cells [lo, hi) hold according to row_ptr (0 when
// row_ptr decreases there: reading them reports it). It reads two row pointers.
func (r *Reader) Values(lo, hi int64) (int64, error) {
	if lo < 0 || hi > r.rows || lo > hi {
		return 0, fmt.Errorf("%s: cells [%d, %d) of %d", r.dir, lo, hi, r.rows)
	}
	rs := int64(r.rowType.Size())
	var pb [8]byte
	var p [2]uint64
	for j, i := range [2]int64{lo, hi} {
		if _, err := r.rowptr.ReadAt(pb[:rs], i*rs); err != nil {
			return 0, fmt.Errorf("%s: %s: %w", r.dir, RowPtrFile, err)
		}
		p[j] = getUint(pb[:], r.rowType)
	}
	if p[1] < p[0] {
		return 0, nil
	}
	return int64(min(p[1]-p[0], math.MaxInt64)), nil
}

// VerifyReport summarises a verified archive.
type VerifyReport struct {
	Dir                  string
	Cells, NNZ, MaxGenes int64
	Data, RowPtr, ColPtr DType
	VarBlocks, ObsBlocks int
	NonFinite            int64 // NaN or infinite values in data (allowed, reported)
}

// Verify checks the array invariants by scanning them once: row_ptr starts at 0, never
// decreases and ends at nnz; no cell holds more values than its genes; every column index
// is below its cell's gene count (from the var block the cell is in). The first violation
// is returned as a *RuleError naming the array.
func (r *Reader) Verify() (*VerifyReport, error) {
	rep := &VerifyReport{Dir: r.dir, Cells: r.rows, NNZ: r.nnz, MaxGenes: r.MaxGenes(), Data: r.dataType, RowPtr: r.rowType, ColPtr: r.colType}
	if r.Var != nil {
		rep.VarBlocks = len(r.Var.Blocks)
	}
	if r.Obs != nil {
		rep.ObsBlocks = len(r.Obs.Blocks)
	}
	fail := func(err error) (*VerifyReport, error) { return nil, fmt.Errorf("%s: %w", r.dir, err) }
	rows := newArrayScanner(r.rowptr, r.rowType)
	colsc := newArrayScanner(r.colptr, r.colType)
	prev, err := rows.next()
	if err != nil {
		return fail(err)
	}
	if err := r.checkRowPtrStart(prev); err != nil {
		return fail(err)
	}
	rules := r.cellRules()
	for i := range r.rows {
		cur, err := rows.next()
		if err != nil {
			return fail(err)
		}
		if err := rules.span(i, prev, cur); err != nil {
			return fail(err)
		}
		for k := prev; k < cur; k++ {
			c, err := colsc.next()
			if err != nil {
				return fail(err)
			}
			if err := rules.gene(i, k, c); err != nil {
				return fail(err)
			}
		}
		prev = cur
	}
	if err := r.checkRowPtrEnd(prev); err != nil {
		return fail(err)
	}
	if r.dataType == Float32 || r.dataType == Float64 {
		ds := newArrayScanner(r.data, r.dataType)
		for range r.nnz {
			v, err := ds.nextFloat()
			if err != nil {
				return fail(err)
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				rep.NonFinite++
			}
		}
	}
	return rep, nil
}

// arrayScanner reads an array's elements in order through a buffer.
type arrayScanner struct {
	br *bufio.Reader
	t  DType
	b  [8]byte
}

func newArrayScanner(f io.ReaderAt, t DType) *arrayScanner {
	return &arrayScanner{br: bufio.NewReaderSize(io.NewSectionReader(f, 0, math.MaxInt64), 1<<20), t: t}
}

func (s *arrayScanner) next() (uint64, error) {
	n := s.t.Size()
	if _, err := io.ReadFull(s.br, s.b[:n]); err != nil {
		return 0, err
	}
	return getUint(s.b[:], s.t), nil
}

func (s *arrayScanner) nextFloat() (float64, error) {
	n := s.t.Size()
	if _, err := io.ReadFull(s.br, s.b[:n]); err != nil {
		return 0, err
	}
	if s.t == Float64 {
		return math.Float64frombits(binary.LittleEndian.Uint64(s.b[:])), nil
	}
	return float64(getFloat(s.b[:], s.t)), nil
}

// ObsColumns returns the columns of the obs block holding row (nil without obs features).
func (r *Reader) ObsColumns(row int64) []ColumnSpec {
	if r.Obs == nil {
		return nil
	}
	if b := r.Obs.Block(row); b >= 0 {
		return slices.Clone(r.Obs.Blocks[b].Columns)
	}
	return nil
}

// ReadTable reads a whole feature block's table (var blocks are a few thousand rows).
func ReadTable(b FeatureBlock) (*Table, error) { return readTable(b) }
