package mldf

import (
	"encoding/json"
	"fmt"

	"github.com/mldf/convert/format"
	"github.com/mldf/convert/internal/jsonout"
)

// The JSON shapes of what inspect, inspect --sample and verify print for an MLDF file
// (docs/schema/inspect.schema.json, sample.schema.json, verify.schema.json): explicit
// output structs with snake_case keys, so that renaming a Go field never renames a key,
// each opening with the shapes every format shares (format.DocJSON, FieldJSON, ValueJSON).

// formatName is the format's name in the registry and in its JSON documents.
const formatName = "mldf"

// DescriptionJSON is the JSON form of a Description.
type DescriptionJSON struct {
	format.DocJSON
	FileSize        jsonout.U64 `json:"file_size"`
	Version         string      `json:"version"`
	VersionMajor    uint16      `json:"version_major"`
	VersionMinor    uint16      `json:"version_minor"`
	Flags           uint32      `json:"flags"`
	FlagNames       []string    `json:"flag_names"`
	NumSamples      jsonout.U64 `json:"num_samples"`
	NumFields       int         `json:"num_fields"`
	PageSize        uint32      `json:"page_size"`
	RowSize         int         `json:"row_size"`
	FieldDescPtr    jsonout.U64 `json:"field_desc_ptr"`
	DataPtr         jsonout.U64 `json:"data_ptr"`
	MetadataPtr     jsonout.U64 `json:"metadata_ptr"`
	AllocTablePtr   jsonout.U64 `json:"alloc_table_ptr"`
	Checksum        string      `json:"checksum"`
	DataRegionBytes jsonout.U64 `json:"data_region_bytes"`
	MetadataBytes   jsonout.U64 `json:"metadata_bytes"`
	NumAllocEntries int         `json:"num_alloc_entries"`
	PayloadBytes    jsonout.U64 `json:"payload_bytes"`
	NumDataPages    jsonout.U64 `json:"num_data_pages"`
	NumPagesUsed    jsonout.U64 `json:"num_pages_used"`
	PageFill        float64     `json:"page_fill"`
	Fields          []FieldJSON `json:"fields"`
}

// FieldJSON is one field of a DescriptionJSON.
type FieldJSON struct {
	format.FieldJSON
	Flags           uint16         `json:"flags"`
	MetadataSize    uint32         `json:"metadata_size"`
	RowOffset       int            `json:"row_offset"`
	HasPayload      bool           `json:"has_payload"`
	NumPayloads     int            `json:"num_payloads"`
	PayloadBytes    jsonout.U64    `json:"payload_bytes"`
	MaxPayloadBytes uint32         `json:"max_payload_bytes"`
	Arguments       *ArgumentsJSON `json:"arguments"`
	NumClasses      int            `json:"num_classes,omitempty"`
	ClassNames      []string       `json:"class_names,omitempty"`
	ClassNamesFrom  string         `json:"class_names_from,omitempty"`
	ClassNamesError string         `json:"class_names_error,omitempty"`
}

// JSON returns the description's JSON form.
func (d *Description) JSON() DescriptionJSON {
	out := DescriptionJSON{DocJSON: format.NewDocJSON(jsonout.KindInspect, formatName, d.File),
		FileSize: jsonout.U64(d.FileSize), Version: d.Version(), VersionMajor: d.VersionMajor,
		VersionMinor: d.VersionMinor, Flags: d.Flags, FlagNames: d.FlagNames, NumSamples: jsonout.U64(d.NumSamples),
		NumFields: d.NumFields, PageSize: d.PageSize, RowSize: d.RowSize, FieldDescPtr: jsonout.U64(d.FieldDescPtr),
		DataPtr: jsonout.U64(d.DataPtr), MetadataPtr: jsonout.U64(d.MetadataPtr), AllocTablePtr: jsonout.U64(d.AllocTablePtr),
		Checksum: jsonout.Hex64(d.Checksum), DataRegionBytes: jsonout.U64(d.DataRegionBytes),
		MetadataBytes: jsonout.U64(d.MetadataBytes), NumAllocEntries: d.AllocEntries, PayloadBytes: jsonout.U64(d.PayloadBytes),
		NumDataPages: jsonout.U64(d.DataPages), NumPagesUsed: jsonout.U64(d.PagesUsed), PageFill: d.PageFill,
		Fields: make([]FieldJSON, 0, len(d.Fields))}
	if out.FlagNames == nil {
		out.FlagNames = []string{}
	}
	for _, f := range d.Fields {
		out.Fields = append(out.Fields, FieldJSON{
			FieldJSON: format.FieldJSON{Index: f.Index, Name: f.Name, Type: f.TypeName, TypeID: uint16(f.Type)},
			Flags:     f.Flags, MetadataSize: f.MetadataSize, RowOffset: f.RowOffset, HasPayload: f.HasPayload,
			NumPayloads: f.Payloads, PayloadBytes: jsonout.U64(f.PayloadBytes), MaxPayloadBytes: f.MaxPayload,
			Arguments: DecodeArguments(f.Type, f.Arguments), NumClasses: f.NumClasses, ClassNames: f.ClassNames,
			ClassNamesFrom: f.ClassNamesFrom, ClassNamesError: f.ClassNamesError})
	}
	return out
}

// MarshalJSON encodes the description as DescriptionJSON.
func (d *Description) MarshalJSON() ([]byte, error) { return json.Marshal(d.JSON()) }

// ArgumentsJSON is a field's 128 argument bytes decoded (docs/fields/*.md): Kind says which
// layout they hold and which of the other keys are present. A layout this reader does not
// know, or bytes that do not decode, are given in hex (Kind "raw", with Error saying why).
type ArgumentsJSON struct {
	Kind    string `json:"kind"` // image, audio, text, ndarray, class_label, raw
	Version uint8  `json:"version"`

	// image
	Mode            string       `json:"mode,omitempty"` // raw, jpeg, png, smart
	JPEGQuality     *uint8       `json:"jpeg_quality,omitempty"`
	Channels        *uint8       `json:"channels,omitempty"`
	MaxResolution   *uint32      `json:"max_resolution,omitempty"`
	Filter          string       `json:"filter,omitempty"`
	FilterID        *uint8       `json:"filter_id,omitempty"`
	ExifOrientation *bool        `json:"exif_orientation,omitempty"`
	Subsampling     string       `json:"subsampling,omitempty"`
	MaxPixels       *jsonout.I64 `json:"max_pixels,omitempty"`

	// audio
	SampleFormat string   `json:"sample_format,omitempty"` // int16, int32, float32, flac
	Mono         *bool    `json:"mono,omitempty"`
	OnLong       string   `json:"on_long,omitempty"` // truncate, skip
	SampleRate   *uint32  `json:"sample_rate,omitempty"`
	MaxDuration  *float64 `json:"max_duration_seconds,omitempty"`
	BitDepth     *uint8   `json:"bit_depth,omitempty"`
	Passthrough  *bool    `json:"passthrough,omitempty"`
	Resampler    string   `json:"resampler,omitempty"`
	StopbandDB   *uint8   `json:"stopband_db,omitempty"`
	Passband     *uint16  `json:"passband_permille,omitempty"`

	// text
	TokenWidth *uint8  `json:"token_width,omitempty"`
	AppendEnd  *bool   `json:"append_end,omitempty"`
	PadLast    *bool   `json:"pad_last,omitempty"`
	EndID      *uint32 `json:"end_id,omitempty"`
	VocabSize  *uint32 `json:"vocab_size,omitempty"`
	SeqLen     *uint32 `json:"seq_len,omitempty"`
	PadID      *uint32 `json:"pad_id,omitempty"`
	Tokenizer  *string `json:"tokenizer,omitempty"`

	// ndarray
	Layout string        `json:"layout,omitempty"` // fixed, npy
	DType  string        `json:"dtype,omitempty"`
	Shape  []jsonout.U64 `json:"shape,omitempty"`

	// class_label
	NumClasses *uint32 `json:"num_classes,omitempty"`
	NamesHash  string  `json:"names_hash,omitempty"`

	// raw
	Hex   string `json:"hex,omitempty"`
	Error string `json:"error,omitempty"`
}

// DecodeArguments decodes a field's arguments for JSON; nil when every byte is zero (INT,
// FLOAT, BYTES and JSON fields without arguments).
func DecodeArguments(t TypeID, a [ArgumentsSize]byte) *ArgumentsJSON {
	if a == [ArgumentsSize]byte{} {
		return nil
	}
	raw := func(err error) *ArgumentsJSON {
		out := &ArgumentsJSON{Kind: "raw", Version: a[0], Hex: hexArguments(a)}
		if err != nil {
			out.Error = err.Error()
		}
		return out
	}
	switch {
	case isImage(t):
		var ia ImageArgs
		if err := ia.Unmarshal(a); err != nil {
			return raw(err)
		}
		exif := ia.Flags&ImageFlagExifOrientation != 0
		out := &ArgumentsJSON{Kind: "image", Version: a[0], Mode: imageArgModeName(ia.Mode), JPEGQuality: &ia.JPEGQuality,
			Channels: &ia.Channels, MaxResolution: &ia.MaxResolution, FilterID: &ia.Filter, ExifOrientation: &exif,
			Subsampling: subsamplingName(ia.Subsampling), MaxPixels: ptr(jsonout.I64(ia.MaxPixels))}
		if name := registered().FilterName; name != nil {
			out.Filter = name(ia.Filter)
		}
		return out
	case t == TypeAudioWaveform || t == TypeAudioCompressed:
		var aa AudioArgs
		if err := aa.Unmarshal(a); err != nil {
			return raw(err)
		}
		onLong := "truncate"
		if aa.SkipLong {
			onLong = "skip"
		}
		return &ArgumentsJSON{Kind: "audio", Version: a[0], SampleFormat: audioFormatName(aa.Format), Mono: &aa.Mono,
			OnLong: onLong, SampleRate: &aa.SampleRate, MaxDuration: &aa.MaxDuration, BitDepth: &aa.BitDepth,
			Passthrough: &aa.Passthrough, Resampler: resamplerName(aa.Resampler), StopbandDB: &aa.StopbandDB, Passband: &aa.Passband}
	case t == TypeTextRaw || t == TypeTextTokenized || t == TypeTextPacked:
		var ta TextArgs
		if err := ta.Unmarshal(a); err != nil {
			return raw(err)
		}
		if t == TypeTextRaw {
			return &ArgumentsJSON{Kind: "text", Version: a[0]}
		}
		end, pad := ta.Flags&TextFlagEnd != 0, ta.Flags&TextFlagPadLast != 0
		return &ArgumentsJSON{Kind: "text", Version: a[0], TokenWidth: &ta.Width, AppendEnd: &end, PadLast: &pad,
			EndID: &ta.EndID, VocabSize: &ta.VocabSize, SeqLen: &ta.SeqLen, PadID: &ta.PadID, Tokenizer: &ta.Tokenizer}
	case t == TypeNDArray:
		var na NDArrayArgs
		if err := na.Unmarshal(a); err != nil {
			return raw(err)
		}
		switch na.Layout {
		case NDArrayNPY:
			return &ArgumentsJSON{Kind: "ndarray", Version: a[0], Layout: "npy"}
		case NDArrayFixed:
			shape := make([]jsonout.U64, len(na.Shape))
			for i, d := range na.Shape {
				shape[i] = jsonout.U64(d)
			}
			return &ArgumentsJSON{Kind: "ndarray", Version: a[0], Layout: "fixed", DType: na.DType, Shape: shape}
		}
		return raw(fmt.Errorf("%w: ndarray layout %d", ErrArgs, na.Layout))
	case t == TypeInt:
		if c, ok := ParseClassLabelArgs(a); ok {
			return &ArgumentsJSON{Kind: "class_label", Version: a[0], NumClasses: &c.NumClasses, NamesHash: jsonout.Hex64(c.NamesHash)}
		}
	}
	return raw(nil)
}

func ptr[T any](v T) *T { return &v }

// enum is one named value of a one-byte code (a mode, a format, a codec).
type enum struct {
	v    uint8
	name string
}

// enumName returns the name of v among names, or kind(v) for a code this reader does not
// know (a newer writer's, or a damaged file's).
func enumName(v uint8, kind string, names ...enum) string {
	for _, e := range names {
		if e.v == v {
			return e.name
		}
	}
	return fmt.Sprintf("%s(%d)", kind, v)
}

func imageArgModeName(m uint8) string {
	return enumName(m, "mode", enum{ImageArgRaw, "raw"}, enum{ImageArgJPEG, "jpeg"}, enum{ImageArgPNG, "png"},
		enum{ImageArgSmart, "smart"})
}

func subsamplingName(s uint8) string { return enumName(s, "subsampling", enum{0, "4:2:0"}) }

func audioFormatName(f uint8) string {
	return enumName(f, "format", enum{AudioInt16, "int16"}, enum{AudioInt32, "int32"}, enum{AudioFloat32, "float32"},
		enum{AudioFLAC, "flac"})
}

func resamplerName(r uint8) string {
	return enumName(r, "resampler", enum{0, "none"}, enum{AudioResamplerKaiser, "kaiser"})
}

// SampleJSON is the JSON form of a SampleText.
type SampleJSON struct {
	format.DocJSON
	Index      int         `json:"index"`
	NumSamples int         `json:"num_samples"`
	Values     []ValueJSON `json:"values"`
}

// ValueJSON is one field's value in a sample: only the members of its type are present.
type ValueJSON struct {
	format.ValueJSON
	Payload *PayloadJSON `json:"payload,omitempty"`
	Image   *ImageJSON   `json:"image,omitempty"`
	Audio   *AudioJSON   `json:"audio,omitempty"`
	Text    *TextJSON    `json:"text,omitempty"`
}

// PayloadJSON is a payload reference: where the payload is and its size in bytes.
type PayloadJSON struct {
	Ptr   jsonout.U64 `json:"ptr"`
	Bytes uint32      `json:"bytes"`
}

// ImageJSON is an image's per-sample metadata, height first.
type ImageJSON struct {
	Height   uint16 `json:"height"`
	Width    uint16 `json:"width"`
	Channels uint8  `json:"channels"`
	Mode     string `json:"mode"`
}

// AudioJSON is a clip's per-sample metadata.
type AudioJSON struct {
	NumFrames   uint32 `json:"num_frames"`
	SampleRate  uint32 `json:"sample_rate"`
	NumChannels uint16 `json:"num_channels"`
	BitDepth    uint8  `json:"bit_depth"`
	Codec       string `json:"codec"`
}

// TextJSON is a text's per-sample metadata.
type TextJSON struct {
	NumTokens uint16 `json:"num_tokens"`
	Encoding  string `json:"encoding"`
}

// JSON returns the value's JSON form.
func (v FieldValue) JSON() ValueJSON {
	out := ValueJSON{ValueJSON: format.NewValueJSON(v.Field, v.Name, v.Type.String())}
	switch {
	case v.Type == TypeInt:
		out.ValueJSON = out.WithInt(v.Int)
		return out
	case v.Type == TypeFloat:
		out.ValueJSON = out.WithFloat(v.Float)
		return out
	}
	out.Payload = &PayloadJSON{Ptr: jsonout.U64(v.Ref.Ptr), Bytes: v.Ref.Size}
	switch {
	case isImage(v.Type):
		out.Image = &ImageJSON{Height: v.Image.Height, Width: v.Image.Width, Channels: v.Image.Channels, Mode: imageMetaModeName(v.Image.Mode)}
	case isAudio(v.Type):
		out.Audio = &AudioJSON{NumFrames: v.Audio.NumSamples, SampleRate: v.Audio.SampleRate, NumChannels: v.Audio.NumChannels,
			BitDepth: v.Audio.BitDepth, Codec: audioCodecName(v.Audio.Codec)}
	case isText(v.Type):
		out.Text = &TextJSON{NumTokens: v.Text.NumTokens, Encoding: textEncodingName(v.Text.Encoding)}
	}
	return out
}

// MarshalJSON encodes the value as ValueJSON.
func (v FieldValue) MarshalJSON() ([]byte, error) { return json.Marshal(v.JSON()) }

func imageMetaModeName(m uint8) string {
	return enumName(m, "mode", enum{ImageModeRaw, "raw"}, enum{ImageModeJPEG, "jpeg"}, enum{ImageModePNG, "png"})
}

func audioCodecName(c uint8) string {
	return enumName(c, "codec", enum{AudioCodecPCM, "pcm"}, enum{AudioCodecFLAC, "flac"})
}

func textEncodingName(e uint8) string {
	return enumName(e, "encoding", enum{TextUTF8, "utf-8"}, enum{TextTokens32, "tokens32"}, enum{TextTokens16, "tokens16"})
}

// VerifyJSON is the JSON form of a VerifyReport.
type VerifyJSON struct {
	format.DocJSON
	FileSize           jsonout.U64 `json:"file_size"`
	NumSamples         int         `json:"num_samples"`
	NumFields          int         `json:"num_fields"`
	NumPayloads        int         `json:"num_payloads"`
	NumEmptyPayloads   int         `json:"num_empty_payloads"`
	PayloadBytes       jsonout.U64 `json:"payload_bytes"`
	DataRegionBytes    jsonout.U64 `json:"data_region_bytes"`
	NumPagesUsed       jsonout.U64 `json:"num_pages_used"`
	PageFill           float64     `json:"page_fill"`
	Checksummed        bool        `json:"checksummed"`
	ChecksumsOK        bool        `json:"checksums_ok"`
	GapsChecked        bool        `json:"gaps_checked"`
	NumClassNameFields int         `json:"num_class_name_fields"`
	FieldsChecked      bool        `json:"fields_checked"`
	Decoded            bool        `json:"decoded"`
	NumDecoded         int         `json:"num_decoded"`
}

// JSON returns the report's JSON form; decoded says whether payloads were decoded.
func (rep *VerifyReport) JSON(decoded bool) VerifyJSON {
	return VerifyJSON{DocJSON: format.NewDocJSON(jsonout.KindVerify, formatName, rep.File), FileSize: jsonout.U64(rep.FileSize),
		NumSamples: rep.Samples, NumFields: rep.Fields, NumPayloads: rep.Entries, NumEmptyPayloads: rep.EmptyPayloads,
		PayloadBytes: jsonout.U64(rep.PayloadBytes), DataRegionBytes: jsonout.U64(rep.DataRegionBytes),
		NumPagesUsed: jsonout.U64(rep.PagesUsed), PageFill: rep.PageFill, Checksummed: rep.Checksummed,
		ChecksumsOK: rep.ChecksumsOK, GapsChecked: rep.GapsChecked, NumClassNameFields: rep.ClassNames,
		FieldsChecked: rep.FieldsChecked, Decoded: decoded, NumDecoded: rep.Decoded}
}
