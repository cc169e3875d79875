package taridx

import (
	"encoding/json"

	"github.com/mldf/convert/format"
	"github.com/mldf/convert/internal/jsonout"
)

// The JSON shapes of what inspect, inspect --sample and verify print for a TARIDX index
// (docs/schema): explicit output structs with snake_case keys, each opening with
// format.DocJSON.

// formatName is the format's name in the registry and in its JSON documents.
const formatName = "taridx"

// DescriptionJSON is the JSON form of a Description; verify prints it too, with kind
// "verify".
type DescriptionJSON struct {
	format.DocJSON
	Version      string        `json:"version"`
	FileSize     jsonout.U64   `json:"file_size"`
	NumRows      jsonout.U64   `json:"num_rows"`
	NumStems     jsonout.U64   `json:"num_stems"`
	NumShards    int           `json:"num_shards"`
	Contiguous   bool          `json:"contiguous"`
	Flags        uint8         `json:"flags"`
	OffCrash     jsonout.U64   `json:"off_crash"`
	OffArr       jsonout.U64   `json:"off_arr"`
	PayloadBytes jsonout.U64   `json:"payload_bytes"`
	Extensions   []ExtJSON     `json:"extensions"`
	CrashStems   []string      `json:"crash_stems"`
	RowsPerShard []jsonout.U64 `json:"rows_per_shard"`
}

// ExtJSON counts the rows and payload bytes of one extension.
type ExtJSON struct {
	ID           int         `json:"id"`
	Ext          string      `json:"ext"`
	NumRows      jsonout.U64 `json:"num_rows"`
	PayloadBytes jsonout.U64 `json:"payload_bytes"`
}

// JSON returns the description's JSON form, as a document of kind.
func (d Description) JSON(kind string) DescriptionJSON {
	out := DescriptionJSON{DocJSON: format.NewDocJSON(kind, formatName, d.File), Version: d.Version,
		FileSize: jsonout.U64(d.FileSize), NumRows: jsonout.U64(d.Rows), NumStems: jsonout.U64(d.Stems), NumShards: d.Shards,
		Contiguous: d.Contiguous, Flags: d.Flags, OffCrash: jsonout.U64(d.OffCrash), OffArr: jsonout.U64(d.OffArr),
		PayloadBytes: jsonout.U64(d.PayloadBytes), Extensions: make([]ExtJSON, len(d.Extensions)),
		CrashStems: d.CrashStems, RowsPerShard: make([]jsonout.U64, len(d.PerShard))}
	if out.CrashStems == nil {
		out.CrashStems = []string{}
	}
	for i, e := range d.Extensions {
		out.Extensions[i] = ExtJSON{ID: e.ID, Ext: e.Ext, NumRows: jsonout.U64(e.Rows), PayloadBytes: jsonout.U64(e.Bytes)}
	}
	for i, n := range d.PerShard {
		out.RowsPerShard[i] = jsonout.U64(n)
	}
	return out
}

// MarshalJSON encodes the description as DescriptionJSON of kind "inspect".
func (d Description) MarshalJSON() ([]byte, error) { return json.Marshal(d.JSON(jsonout.KindInspect)) }

// RowJSON is the JSON form of a RowText.
type RowJSON struct {
	format.DocJSON
	Index         int         `json:"index"`
	NumRows       int         `json:"num_rows"`
	Shard         uint16      `json:"shard"`
	HeaderOffset  jsonout.U64 `json:"header_offset"`
	PayloadOffset jsonout.U64 `json:"payload_offset"`
	PayloadBytes  jsonout.U64 `json:"payload_bytes"`
	ExtID         uint16      `json:"ext_id"`
	Ext           string      `json:"ext"`
	CrashID       uint32      `json:"crash_id"`
	KeyHash       string      `json:"key_hash"`
}

// MarshalJSON encodes the row as RowJSON.
func (r RowText) MarshalJSON() ([]byte, error) {
	return json.Marshal(RowJSON{DocJSON: format.NewDocJSON(jsonout.KindSample, formatName, r.File), Index: r.Index,
		NumRows: r.Of, Shard: r.Row.FID, HeaderOffset: jsonout.U64(r.Row.Offset), PayloadOffset: jsonout.U64(r.Row.Offset + 512),
		PayloadBytes: jsonout.U64(r.Row.Size), ExtID: r.Row.ExtID, Ext: r.Ext, CrashID: r.Row.CrashID, KeyHash: jsonout.Hex64(r.Row.KeyHash)})
}
