package mds

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/mldf/convert/format"
	"github.com/mldf/convert/internal/jsonout"
)

// The JSON shapes of what inspect, inspect --sample and verify print for an MDS dataset
// (docs/schema): explicit output structs with snake_case keys, each opening with
// format.DocJSON.

// formatName is the format's name in the registry and in its JSON documents.
const formatName = "mds"

// DescriptionJSON is the JSON form of a Description.
type DescriptionJSON struct {
	format.DocJSON
	Version    string       `json:"version"`
	NumSamples jsonout.I64  `json:"num_samples"`
	NumShards  int          `json:"num_shards"`
	Columns    []ColumnJSON `json:"columns"`
	Shards     []ShardJSON  `json:"shards"`
}

// ColumnJSON is a column: its encoding and its size in bytes (0: variable).
type ColumnJSON struct {
	Name     string `json:"name"`
	Encoding string `json:"encoding"`
	Size     int    `json:"size"`
}

// ShardJSON is one shard of the index (file_size -1: not given).
type ShardJSON struct {
	File       string      `json:"file"`
	NumSamples jsonout.I64 `json:"num_samples"`
	FileSize   jsonout.I64 `json:"file_size"`
}

// MarshalJSON encodes the description as DescriptionJSON.
func (d *Description) MarshalJSON() ([]byte, error) {
	out := DescriptionJSON{DocJSON: format.NewDocJSON(jsonout.KindInspect, formatName, d.Dir), Version: "2",
		NumSamples: jsonout.I64(d.Samples), NumShards: len(d.Shards), Columns: make([]ColumnJSON, len(d.Columns)),
		Shards: make([]ShardJSON, len(d.Shards))}
	for i, c := range d.Columns {
		out.Columns[i] = ColumnJSON(c)
	}
	for i, s := range d.Shards {
		out.Shards[i] = ShardJSON{File: s.Basename, NumSamples: jsonout.I64(s.Samples), FileSize: jsonout.I64(s.Bytes)}
	}
	return json.Marshal(out)
}

// SampleJSON is the JSON form of a SampleText.
type SampleJSON struct {
	format.DocJSON
	Index      jsonout.I64 `json:"index"`
	NumSamples jsonout.I64 `json:"num_samples"`
	Shard      string      `json:"shard"`
	Values     []ValueJSON `json:"values"`
}

// ValueJSON is one column's value: a number for the numeric encodings, the text for the
// textual ones (at most 4096 bytes, with text_truncated), and its size in bytes.
type ValueJSON struct {
	Column        int     `json:"column"`
	Name          string  `json:"name"`
	Encoding      string  `json:"encoding"`
	Bytes         int     `json:"bytes"`
	Number        any     `json:"number,omitempty"`
	Text          *string `json:"text,omitempty"`
	TextTruncated bool    `json:"text_truncated,omitempty"`
}

// MarshalJSON encodes the sample as SampleJSON.
func (s SampleText) MarshalJSON() ([]byte, error) {
	out := SampleJSON{DocJSON: format.NewDocJSON(jsonout.KindSample, formatName, s.Dir), Index: jsonout.I64(s.Index),
		NumSamples: jsonout.I64(s.Of), Shard: s.Shard, Values: make([]ValueJSON, len(s.Columns))}
	for k, c := range s.Columns {
		v := s.Values[k]
		vj := ValueJSON{Column: k, Name: c.Name, Encoding: c.Encoding, Bytes: len(v)}
		if x, ok := scalar(c.Encoding, v); ok {
			vj.Number = x
		} else if textual(c.Encoding) && utf8.Valid(v) {
			t := v
			if len(t) > maxShownText {
				t, vj.TextTruncated = t[:maxShownText], true
				for len(t) > 0 && !utf8.Valid(t) {
					t = t[:len(t)-1]
				}
			}
			str := string(t)
			vj.Text = &str
		}
		out.Values[k] = vj
	}
	return json.Marshal(out)
}

// VerifyJSON is the JSON form of a VerifyReport.
type VerifyJSON struct {
	format.DocJSON
	NumShards    int         `json:"num_shards"`
	NumSamples   jsonout.I64 `json:"num_samples"`
	PayloadBytes jsonout.I64 `json:"payload_bytes"`
	Checksummed  bool        `json:"checksummed"`
}

// MarshalJSON encodes the report as VerifyJSON.
func (rep *VerifyReport) MarshalJSON() ([]byte, error) {
	return json.Marshal(VerifyJSON{DocJSON: format.NewDocJSON(jsonout.KindVerify, formatName, rep.Dir), NumShards: rep.Shards,
		NumSamples: jsonout.I64(rep.Samples), PayloadBytes: jsonout.I64(rep.PayloadBytes)})
}
