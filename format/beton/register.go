package beton

import (
	"context"
	"fmt"
	"io"

	"github.com/mldf/convert/format"
)

func init() {
	// FFCV files have no signature: a .beton name marks them. They are read from local files
	// and, through ranged reads, from buckets.
	format.Register(format.Format{Name: formatName, Ext: ".beton",
		OpenPath: func(_ context.Context, path string) (format.File, error) {
			r, err := Open(path)
			if err != nil {
				return nil, err
			}
			return &File{r}, nil
		},
		Open: func(_ context.Context, name string, ra io.ReaderAt, size int64) (format.File, error) {
			r, err := NewReader(ra, size, name)
			if err != nil {
				return nil, err
			}
			if c, ok := ra.(io.Closer); ok {
				r.closer = c
			}
			return &File{r}, nil
		},
	})
}

// File is a .beton file as a format.File.
type File struct{ *Reader }

// Description is what convert inspect shows of a .beton file; it encodes as
// DescriptionJSON.
type Description struct {
	File          string
	FileSize      int64
	Format        string
	NumSamples    int64
	NumFields     int
	PageSize      uint32
	RowSize       int
	MetadataPtr   int64
	DataPtr       int64
	AllocTablePtr uint64
	AllocEntries  int
	PayloadBytes  uint64
	Fields        []DescriptionField
	Sorted        bool // the allocation table is sorted by ptr in the file
}

// DescriptionField is one field of a Description.
type DescriptionField struct {
	Index     int
	Name      string
	Type      string
	TypeID    uint8
	RowOffset int
	DType     string
	Shape     []uint64
}

// Describe returns the file's *Description: header, fields and sections.
func (f *File) Describe() (format.Text, error) {
	r := f.Reader
	h := r.Header()
	d := &Description{File: r.name, FileSize: r.Size(), Format: "FFCV .beton version 2", NumSamples: r.NumSamples(),
		NumFields: len(r.Fields()), PageSize: h.PageSize, RowSize: r.Layout().Size,
		MetadataPtr: MetadataOffset(len(r.Fields())), DataPtr: r.DataStart(), AllocTablePtr: h.AllocTablePtr,
		AllocEntries: len(r.AllocTable()), Sorted: r.SortedInFile()}
	for _, e := range r.AllocTable() {
		d.PayloadBytes += e.Size
	}
	for i, fd := range r.Fields() {
		d.Fields = append(d.Fields, DescriptionField{Index: i, Name: fd.Name, Type: fd.Type.String(), TypeID: uint8(fd.Type),
			RowOffset: r.Layout().Offsets[i], DType: fd.DType, Shape: fd.Shape})
	}
	return d, nil
}

// WriteText prints the description as convert inspect shows it.
func (d *Description) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "file       %s (%s)\n", d.File, format.Size(uint64(d.FileSize)))
	fmt.Fprintf(w, "format     %s (no checksums)\n", d.Format)
	fmt.Fprintf(w, "samples    %d, %d fields, %d-byte rows, page size %s\n", d.NumSamples, d.NumFields, d.RowSize, format.Size(uint64(d.PageSize)))
	sorted := "sorted"
	if !d.Sorted {
		sorted = "not sorted in the file"
	}
	fmt.Fprintf(w, "sections   metadata @%d, data @%d, alloc table @%d (%d entries, %s), %s of payload\n",
		d.MetadataPtr, d.DataPtr, d.AllocTablePtr, d.AllocEntries, sorted, format.Size(d.PayloadBytes))
	fmt.Fprintln(w, "fields")
	for _, f := range d.Fields {
		fmt.Fprintf(w, "  #%d %-16s %-8s row @%d", f.Index, f.Name, f.Type, f.RowOffset)
		if f.DType != "" {
			fmt.Fprintf(w, " dtype %s shape %v", f.DType, f.Shape)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// Sample returns sample i's values.
func (f *File) Sample(i int64) (format.Text, error) {
	vals, err := f.Reader.Sample(i)
	if err != nil {
		return nil, err
	}
	return SampleText{File: f.name, Index: i, Of: f.NumSamples(), Values: vals}, nil
}

// SampleText is one sample's values as inspect --sample shows them; it encodes as
// SampleJSON.
type SampleText struct {
	File      string
	Index, Of int64
	Values    []Value
}

// WriteText prints "sample I of N" and one value a line.
func (s SampleText) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "sample %d of %d\n", s.Index, s.Of)
	for _, v := range s.Values {
		fmt.Fprintf(w, "  %s\n", v)
	}
	return nil
}

// Verify checks the file's structure (the format has no checksums) and returns the report.
func (f *File) Verify(context.Context, format.VerifyOptions) (format.Text, error) {
	rep, err := f.Reader.Verify()
	if err != nil {
		return nil, err
	}
	return &rep, nil
}

// WriteText prints the report's one line, as convert verify shows it.
func (rep *VerifyReport) WriteText(w io.Writer) error {
	note := ""
	if !rep.SortedInFile {
		note = "; the allocation table is not sorted by ptr in the file (FFCV's loader sorts it)"
	}
	_, err := fmt.Fprintf(w, "%s: OK: %d samples, %d fields, %d payloads (%s), %d pages used; structure checked (.beton has no checksums)%s\n",
		rep.File, rep.Samples, rep.Fields, rep.Entries, format.Size(uint64(rep.PayloadBytes)), rep.PagesUsed, note)
	return err
}
