package beton

import (
	"encoding/json"

	"github.com/mldf/convert/format"
	"github.com/mldf/convert/internal/jsonout"
)

// The JSON shapes of what inspect, inspect --sample and verify print for a .beton file
// (docs/schema): explicit output structs with snake_case keys, each opening with the shapes
// every format shares (format.DocJSON, FieldJSON, ValueJSON).

// formatName is the format's name in the registry and in its JSON documents.
const formatName = "beton"

// DescriptionJSON is the JSON form of a Description.
type DescriptionJSON struct {
	format.DocJSON
	FileSize         jsonout.U64 `json:"file_size"`
	Version          string      `json:"version"`
	NumSamples       jsonout.U64 `json:"num_samples"`
	NumFields        int         `json:"num_fields"`
	PageSize         uint32      `json:"page_size"`
	RowSize          int         `json:"row_size"`
	MetadataPtr      jsonout.U64 `json:"metadata_ptr"`
	DataPtr          jsonout.U64 `json:"data_ptr"`
	AllocTablePtr    jsonout.U64 `json:"alloc_table_ptr"`
	NumAllocEntries  int         `json:"num_alloc_entries"`
	PayloadBytes     jsonout.U64 `json:"payload_bytes"`
	AllocTableSorted bool        `json:"alloc_table_sorted"`
	Fields           []FieldJSON `json:"fields"`
}

// FieldJSON is one field of a DescriptionJSON; dtype and shape are an NDArray field's.
type FieldJSON struct {
	format.FieldJSON
	RowOffset int           `json:"row_offset"`
	DType     string        `json:"dtype,omitempty"`
	Shape     []jsonout.U64 `json:"shape,omitempty"`
}

// FormatVersion is the .beton layout version this package reads and writes.
const FormatVersion = "2"

// MarshalJSON encodes the description as DescriptionJSON.
func (d *Description) MarshalJSON() ([]byte, error) {
	out := DescriptionJSON{DocJSON: format.NewDocJSON(jsonout.KindInspect, formatName, d.File),
		FileSize: jsonout.U64(d.FileSize), Version: FormatVersion, NumSamples: jsonout.U64(d.NumSamples), NumFields: d.NumFields,
		PageSize: d.PageSize, RowSize: d.RowSize, MetadataPtr: jsonout.U64(d.MetadataPtr), DataPtr: jsonout.U64(d.DataPtr),
		AllocTablePtr: jsonout.U64(d.AllocTablePtr), NumAllocEntries: d.AllocEntries, PayloadBytes: jsonout.U64(d.PayloadBytes),
		AllocTableSorted: d.Sorted, Fields: make([]FieldJSON, len(d.Fields))}
	for i, f := range d.Fields {
		out.Fields[i] = FieldJSON{FieldJSON: format.FieldJSON{Index: f.Index, Name: f.Name, Type: f.Type, TypeID: uint16(f.TypeID)},
			RowOffset: f.RowOffset, DType: f.DType}
		for _, n := range f.Shape {
			out.Fields[i].Shape = append(out.Fields[i].Shape, jsonout.U64(n))
		}
	}
	return json.Marshal(out)
}

// SampleJSON is the JSON form of a SampleText.
type SampleJSON struct {
	format.DocJSON
	Index      int64       `json:"index"`
	NumSamples int64       `json:"num_samples"`
	Values     []ValueJSON `json:"values"`
}

// ValueJSON is one field's value: only the members of its type are present. A payload is
// given by its size (convert cat prints its bytes), a JSON field's by its text too.
type ValueJSON struct {
	format.ValueJSON
	Image        *ImageJSON `json:"image,omitempty"`
	PayloadBytes *int       `json:"payload_bytes,omitempty"`
	JSONText     *string    `json:"json_text,omitempty"`
}

// ImageJSON is an image's metadata, height first.
type ImageJSON struct {
	Height uint16      `json:"height"`
	Width  uint16      `json:"width"`
	Mode   string      `json:"mode"` // jpeg, raw
	Ptr    jsonout.U64 `json:"ptr"`
}

// MarshalJSON encodes the sample as SampleJSON.
func (s SampleText) MarshalJSON() ([]byte, error) {
	out := SampleJSON{DocJSON: format.NewDocJSON(jsonout.KindSample, formatName, s.File), Index: s.Index,
		NumSamples: s.Of, Values: make([]ValueJSON, len(s.Values))}
	for i, v := range s.Values {
		vj := ValueJSON{ValueJSON: format.NewValueJSON(i, v.Field, v.Type.String())}
		switch v.Type {
		case TypeInt:
			vj.ValueJSON = vj.WithInt(v.Int)
		case TypeFloat:
			vj.ValueJSON = vj.WithFloat(v.Float)
		default:
			n := len(v.Data)
			vj.PayloadBytes = &n
		}
		switch v.Type {
		case TypeRGBImage:
			mode := "jpeg"
			if v.Image.Mode == ImageRaw {
				mode = "raw"
			}
			vj.Image = &ImageJSON{Height: v.Image.Height, Width: v.Image.Width, Mode: mode, Ptr: jsonout.U64(v.Image.Ptr)}
		case TypeJSON:
			t := string(v.Data)
			vj.JSONText = &t
		}
		out.Values[i] = vj
	}
	return json.Marshal(out)
}

// VerifyJSON is the JSON form of a VerifyReport.
type VerifyJSON struct {
	format.DocJSON
	NumSamples                 jsonout.I64 `json:"num_samples"`
	NumFields                  jsonout.I64 `json:"num_fields"`
	NumPayloads                jsonout.I64 `json:"num_payloads"`
	PayloadBytes               jsonout.I64 `json:"payload_bytes"`
	NumPagesUsed               jsonout.I64 `json:"num_pages_used"`
	AllocTableSorted           bool        `json:"alloc_table_sorted"`
	NumUnreferencedAllocations jsonout.I64 `json:"num_unreferenced_allocations"`
	Checksummed                bool        `json:"checksummed"`
}

// MarshalJSON encodes the report as VerifyJSON.
func (rep *VerifyReport) MarshalJSON() ([]byte, error) {
	return json.Marshal(VerifyJSON{DocJSON: format.NewDocJSON(jsonout.KindVerify, formatName, rep.File),
		NumSamples: jsonout.I64(rep.Samples), NumFields: jsonout.I64(rep.Fields), NumPayloads: jsonout.I64(rep.Entries),
		PayloadBytes: jsonout.I64(rep.PayloadBytes), NumPagesUsed: jsonout.I64(rep.PagesUsed), AllocTableSorted: rep.SortedInFile,
		NumUnreferencedAllocations: jsonout.I64(rep.UnreferencedAllocation)})
}
