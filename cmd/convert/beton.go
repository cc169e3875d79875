package main

import (
	"fmt"
	"io"

	"github.com/mldf/convert/format/beton"
)

// betonDescription is what inspect prints for a .beton file.
type betonDescription struct {
	File          string        `json:"file"`
	FileSize      int64         `json:"file_size"`
	Format        string        `json:"format"`
	NumSamples    int64         `json:"num_samples"`
	NumFields     int           `json:"num_fields"`
	PageSize      uint32        `json:"page_size"`
	RowSize       int           `json:"row_size"`
	MetadataPtr   int64         `json:"metadata_ptr"`
	DataPtr       int64         `json:"data_ptr"`
	AllocTablePtr uint64        `json:"alloc_table_ptr"`
	AllocEntries  int           `json:"alloc_entries"`
	PayloadBytes  uint64        `json:"payload_bytes"`
	Fields        []betonField  `json:"fields"`
	Sorted        bool          `json:"alloc_table_sorted"`
	Sample        []beton.Value `json:"sample,omitempty"`
}

type betonField struct {
	Index     int      `json:"index"`
	Name      string   `json:"name"`
	Type      string   `json:"type"`
	TypeID    uint8    `json:"type_id"`
	RowOffset int      `json:"row_offset"`
	DType     string   `json:"dtype,omitempty"`
	Shape     []uint64 `json:"shape,omitempty"`
}

// inspectBeton prints a .beton file's header, fields and sections, or sample n's fields.
func inspectBeton(w io.Writer, path string, n int, asJSON bool) error {
	r, err := beton.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	if n >= 0 {
		vals, err := r.Sample(int64(n))
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(w, vals)
		}
		fmt.Fprintf(w, "sample %d of %d\n", n, r.NumSamples())
		for _, v := range vals {
			fmt.Fprintf(w, "  %s\n", v)
		}
		return nil
	}
	h := r.Header()
	d := betonDescription{File: path, FileSize: r.Size(), Format: "FFCV .beton version 2", NumSamples: r.NumSamples(),
		NumFields: len(r.Fields()), PageSize: h.PageSize, RowSize: r.Layout().Size,
		MetadataPtr: beton.MetadataOffset(len(r.Fields())), DataPtr: r.DataStart(), AllocTablePtr: h.AllocTablePtr,
		AllocEntries: len(r.AllocTable()), Sorted: r.SortedInFile()}
	for _, e := range r.AllocTable() {
		d.PayloadBytes += e.Size
	}
	for i, f := range r.Fields() {
		d.Fields = append(d.Fields, betonField{Index: i, Name: f.Name, Type: f.Type.String(), TypeID: uint8(f.Type),
			RowOffset: r.Layout().Offsets[i], DType: f.DType, Shape: f.Shape})
	}
	if asJSON {
		return writeJSON(w, d)
	}
	fmt.Fprintf(w, "file       %s (%s)\n", d.File, human(uint64(d.FileSize)))
	fmt.Fprintf(w, "format     %s (no checksums)\n", d.Format)
	fmt.Fprintf(w, "samples    %d, %d fields, %d-byte rows, page size %s\n", d.NumSamples, d.NumFields, d.RowSize, human(uint64(d.PageSize)))
	sorted := "sorted"
	if !d.Sorted {
		sorted = "not sorted in the file"
	}
	fmt.Fprintf(w, "sections   metadata @%d, data @%d, alloc table @%d (%d entries, %s), %s of payload\n",
		d.MetadataPtr, d.DataPtr, d.AllocTablePtr, d.AllocEntries, sorted, human(d.PayloadBytes))
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

// verifyBeton checks a .beton file's structure (the format has no checksums).
func verifyBeton(w io.Writer, path string) error {
	r, err := beton.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	rep, err := r.Verify()
	if err != nil {
		return err
	}
	note := ""
	if !rep.SortedInFile {
		note = "; the allocation table is not sorted by ptr in the file (FFCV's loader sorts it)"
	}
	fmt.Fprintf(w, "%s: OK: %d samples, %d fields, %d payloads (%s), %d pages used; structure checked (.beton has no checksums)%s\n",
		rep.File, rep.Samples, rep.Fields, rep.Entries, human(uint64(rep.PayloadBytes)), rep.PagesUsed, note)
	return nil
}
