package recipe

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pipeline"
)

// Source types.
var sourceTypes = []string{"images", "audio_folder", "librispeech", "nemo_manifest", "tar", "jsonl", "parquet", "h5ad", "mtx10x", "scdl"}

// Field types and the recipe keys that apply to each (besides name, type, from, required).
var fieldKeys = map[string][]string{
	"int":     {"names"},
	"float":   nil,
	"bytes":   {"base64"},
	"json":    nil,
	"ndarray": {"dtype", "shape"},
	"image":   {"mode", "max_resolution", "jpeg_quality", "filter", "channels", "max_pixels"},
	"audio":   {"sample_rate", "channels", "sample_type", "max_duration", "on_long"},
	"flac":    {"sample_rate", "channels", "max_duration", "on_long"},
	"text":    nil,
	"tokens":  {"tokenizer", "append_eot"},
	"packed":  {"tokenizer", "seq_len", "remainder", "pad_id"},
}

var optionKeys = []string{"mode", "max_resolution", "jpeg_quality", "filter", "channels", "max_pixels",
	"sample_rate", "sample_type", "max_duration", "on_long", "tokenizer", "append_eot", "seq_len",
	"remainder", "pad_id", "dtype", "shape", "base64", "names"}

// Choices of the enumerated options.
var (
	ImageModes   = []string{"jpeg", "png", "raw", "smart"}
	ImageFilters = []string{"box", "area", "nearest", "linear", "bilinear", "catmullrom", "bicubic", "mitchell", "lanczos"}
	Tokenizers   = []string{"cl100k_base", "o200k_base", "p50k_base", "r50k_base", "none"}
	SampleTypes  = []string{"int16", "int32", "float32"}
)

// Defaults fills in the default of every option the recipe leaves unset.
func (r *Recipe) Defaults() {
	if r.Format == "" {
		r.Format = "mldf"
	}
	if r.PageSize == 0 {
		r.PageSize = mldf.DefaultPageSize
		if r.Format == "beton" {
			r.PageSize = 8 << 20
		}
	}
	if r.Checksums == nil {
		t := true
		r.Checksums = &t
	}
	if r.OnError == "" {
		r.OnError = "skip"
	}
	if r.LogFormat == "" {
		r.LogFormat = "text"
	}
	if r.Output != "" {
		if r.Rejects == "" {
			r.Rejects = r.Output + ".rejects.jsonl"
		}
		if r.Report == "" {
			r.Report = r.Output + ".report.json"
		}
	}
	for i := range r.Fields {
		f := &r.Fields[i]
		if f.From == "" {
			f.From = f.Name
		}
		switch f.Type {
		case "image":
			if f.Mode == "" {
				f.Mode = "jpeg"
			}
			if f.JPEGQuality == 0 && !r.has("fields", "#"+strconv.Itoa(i), "jpeg_quality") {
				f.JPEGQuality = 90
			}
			if f.Filter == "" {
				f.Filter = "box" // area averaging, as FFCV's cv2.INTER_AREA; cheap after DCT scaling
			}
			if f.Channels == "" {
				f.Channels = "3"
			}
		case "audio", "flac":
			if f.Channels == "" {
				f.Channels = "keep"
			}
			if f.SampleType == "" && f.Type == "audio" {
				f.SampleType = "int16"
			}
			if f.OnLong == "" {
				f.OnLong = "truncate"
			}
		case "tokens", "packed":
			if f.Tokenizer == "" {
				f.Tokenizer = "cl100k_base"
			}
			if f.Remainder == "" && f.Type == "packed" {
				f.Remainder = "drop"
			}
		}
	}
}

// Validate checks the whole recipe and returns every problem found (a Problems error wrapped
// in ErrRecipe), or nil. Call Defaults first.
func (r *Recipe) Validate() error {
	c := &collector{}
	if r.parsed != nil {
		c.merge(r.parsed) // unknown keys, wrong types: reported with the rest
	}
	add := c.add
	// in checks a number against its range; 0 (the default, explained by zero) is always
	// allowed unless zero is "".
	in := func(line int, key string, v, lo, hi int64, zero string) {
		if (v == 0 && zero != "") || (v >= lo && v <= hi) {
			return
		}
		if zero != "" {
			zero = " (" + zero + ")"
		}
		add(line, "%s %d is out of range: %d..%d%s", key, v, lo, hi, zero)
	}
	sizeIn := func(line int, key string, v, lo, hi int64, zero string) {
		if v == 0 || (v >= lo && v <= hi) {
			return
		}
		add(line, "%s %s is out of range: %s..%s (%s)", key, FormatSize(v), FormatSize(lo), FormatSize(hi), zero)
	}
	oneOf := func(line int, key, v string, choices []string) {
		if !slices.Contains(choices, v) {
			add(line, "%s: %s is not one of %s", key, quote.Q(v), strings.Join(choices, ", "))
		}
	}

	// Source.
	s := r.Source
	switch {
	case s.Type == "":
		add(r.line("source"), "source.type is required (one of %s)", strings.Join(sourceTypes, ", "))
	case !slices.Contains(sourceTypes, s.Type):
		oneOf(r.line("source", "type"), "source.type", s.Type, sourceTypes)
	case isCellSource(s.Type): // rules in validateCells (scdl.go)
	case s.Type == "tar" || s.Type == "jsonl" || s.Type == "parquet":
		if len(s.Inputs) == 0 {
			add(r.line("source"), "source.inputs: a %s source needs at least one input (file, glob or brace range)", s.Type)
		}
		if s.Path != "" {
			add(r.line("source", "path"), "source.path does not apply to a %s source (use inputs)", s.Type)
		}
	default:
		if s.Path == "" {
			add(r.line("source"), "source.path is required for a %s source", s.Type)
		}
		if len(s.Inputs) > 0 {
			add(r.line("source", "inputs"), "source.inputs does not apply to a %s source (use path)", s.Type)
		}
	}
	// URLs (s3://, gs://, az://, azblob://, file://): well formed, and only where the source
	// reads from buckets. Whether they exist is checked by Build, before any work.
	urlSources := []string{"images", "audio_folder", "librispeech", "nemo_manifest", "tar", "jsonl", "parquet"}
	checkURL := func(line int, key, v string) {
		l, err := objstore.Parse(v)
		if err != nil {
			add(line, "%s: %v", key, err)
			return
		}
		if !l.IsLocal() && !slices.Contains(urlSources, s.Type) {
			add(line, "%s %s: a %s source reads local files only (sources that read buckets: %s)", key, quote.Q(v), s.Type, strings.Join(urlSources, ", "))
		}
	}
	if s.Path != "" {
		checkURL(r.line("source", "path"), "source.path", s.Path)
	}
	for _, in := range s.Inputs {
		checkURL(r.line("source", "inputs"), "source.inputs", in)
	}
	if s.Flat && s.Type != "images" {
		add(r.line("source", "flat"), "source.flat applies only to an images source")
	}
	if s.UnknownMembers != "" {
		if s.Type != "tar" {
			add(r.line("source", "unknown_members"), "source.unknown_members applies only to a tar source")
		} else {
			oneOf(r.line("source", "unknown_members"), "source.unknown_members", s.UnknownMembers, []string{"reject", "ignore"})
		}
	}
	if s.MaxLineBytes != 0 && s.Type != "jsonl" {
		add(r.line("source", "max_line_bytes"), "source.max_line_bytes applies only to a jsonl source")
	} else {
		sizeIn(r.line("source", "max_line_bytes"), "source.max_line_bytes", int64(s.MaxLineBytes), MinLineBytes, MaxLineBytes, "0 = 256MiB")
	}
	if s.MaxMemberSize != 0 && s.Type != "tar" {
		add(r.line("source", "max_member_size"), "source.max_member_size applies only to a tar source")
	} else {
		sizeIn(r.line("source", "max_member_size"), "source.max_member_size", int64(s.MaxMemberSize), MinMemberSize, MaxMemberSize,
			"0 = "+FormatSize(DefaultMaxMemberSize))
	}

	// Run options.
	if r.Output == "" {
		add(0, "output is required (in the recipe or as --output)")
	} else if fi := filepath.Base(r.Output); fi == "." || fi == "/" {
		add(r.line("output"), "output %s is not a file path", quote.Q(r.Output))
	}
	oneOf(r.line("format"), "format", r.Format, []string{"mldf", "beton", "scdl"})
	ps := int64(r.PageSize)
	if ps < MinPageSize || ps > MaxPageSize || ps&(ps-1) != 0 {
		add(r.line("page_size"), "page_size %s must be a power of two between %s and %s", FormatSize(ps), FormatSize(MinPageSize), FormatSize(MaxPageSize))
	} else if r.Format == "beton" && ps < MinBetonPageSize {
		add(r.line("page_size"), "page_size %s: FFCV .beton needs at least %s", FormatSize(ps), FormatSize(MinBetonPageSize))
	}
	in(r.line("workers"), "workers", int64(r.Workers), 1, MaxWorkers, "0 = all cores")
	in(r.line("chunk_size"), "chunk_size", int64(r.ChunkSize), 1, MaxChunkSize, fmt.Sprintf("0 = adaptive, %d samples or up to 1024 small ones", pipeline.DefaultChunkSize))
	oneOf(r.line("on_error"), "on_error", r.OnError, []string{"skip", "fail"})
	if _, _, err := ParseMaxErrors(r.MaxErrors); err != nil {
		add(r.line("max_errors"), "max_errors: %v", err)
	}
	oneOf(r.line("log_format"), "log_format", r.LogFormat, []string{"text", "json"})
	if r.Shards < 0 || r.Shards > MaxShards {
		add(r.line("shards"), "shards %d must be 1..%d (0 = not sharded)", r.Shards, MaxShards)
	} else if r.Shard < 0 || (r.Shards > 0 && r.Shard >= r.Shards) || (r.Shards == 0 && r.Shard != 0) {
		add(r.line("shard"), "shard %d of %d: need 0 <= shard < shards", r.Shard, r.Shards)
	}

	// Fields.
	if len(r.Fields) == 0 && s.Type != "parquet" && r.Format != "scdl" { // parquet: fields inferred from the schema
		add(r.line("fields"), "fields: at least one field is required")
	}
	seen := map[string]int{}
	fieldTypes := strings.Join(sortedKeys(fieldKeys), ", ")
	for i, f := range r.Fields {
		at := func(key string) int { return r.line("fields", "#"+strconv.Itoa(i), key) }
		where := fmt.Sprintf("fields[%d]", i)
		if f.Name != "" {
			where = "field " + quote.Q(f.Name)
		}
		if err := mldf.ValidateName(f.Name); err != nil {
			add(at("name"), "%s: %v", where, err)
		} else if prev, dup := seen[f.Name]; dup {
			add(at("name"), "%s is defined twice (also fields[%d])", where, prev)
		} else {
			seen[f.Name] = i
		}
		keys, known := fieldKeys[f.Type]
		if !known {
			add(at("type"), "%s: type %s is not one of %s", where, quote.Q(f.Type), fieldTypes)
			continue
		}
		for _, k := range optionKeys {
			if r.has("fields", "#"+strconv.Itoa(i), k) && !slices.Contains(keys, k) {
				add(at(k), "%s: %s does not apply to a %s field", where, k, f.Type)
			}
		}
		switch f.Type {
		case "image":
			oneOf(at("mode"), where+": mode", f.Mode, ImageModes)
			oneOf(at("filter"), where+": filter", f.Filter, ImageFilters)
			oneOf(at("channels"), where+": channels", f.Channels, []string{"1", "3", "4"})
			if f.JPEGQuality < 1 || f.JPEGQuality > 100 {
				add(at("jpeg_quality"), "%s: jpeg_quality %d must be 1..100", where, f.JPEGQuality)
			}
			in(at("max_resolution"), where+": max_resolution", int64(f.MaxResolution), 1, MaxResolution, "0 = keep")
			in(at("max_pixels"), where+": max_pixels", f.MaxPixels, 1, MaxPixels, "0 = the default limit")
		case "audio", "flac":
			oneOf(at("channels"), where+": channels", f.Channels, []string{"mono", "keep"})
			in(at("sample_rate"), where+": sample_rate", int64(f.SampleRate), 1, MaxSampleRate, "0 = keep the input's rate")
			if f.Type == "audio" {
				oneOf(at("sample_type"), where+": sample_type", f.SampleType, SampleTypes)
			}
			if d := f.MaxDuration; !(d >= 0 && d <= MaxDuration) { // NaN fails both
				add(at("max_duration"), "%s: max_duration %v is out of range: 0 (no limit) or up to %d seconds", where, d, MaxDuration)
			}
			oneOf(at("on_long"), where+": on_long", f.OnLong, []string{"truncate", "skip"})
		case "tokens", "packed":
			oneOf(at("tokenizer"), where+": tokenizer", f.Tokenizer, Tokenizers)
			if f.Type == "packed" {
				if f.SeqLen == 0 && !r.refused("fields", "#"+strconv.Itoa(i), "seq_len") {
					add(at("seq_len"), "%s: seq_len is required (1..%d tokens per row)", where, MaxSeqLen)
				} else if f.SeqLen != 0 {
					in(at("seq_len"), where+": seq_len", int64(f.SeqLen), 1, MaxSeqLen, "")
				}
				oneOf(at("remainder"), where+": remainder", f.Remainder, []string{"drop", "pad"})
				if f.PadID != nil && (*f.PadID < 0 || int64(*f.PadID) > MaxPadID) {
					add(at("pad_id"), "%s: pad_id %d is out of range: 0..%d", where, *f.PadID, int64(MaxPadID))
				}
			}
		case "ndarray":
			if len(f.Shape) > 0 && f.DType == "" {
				add(at("shape"), "%s: shape needs a dtype", where)
			} else if f.DType != "" && mldf.ValidateName(f.Name) == nil {
				// The encoder's own checks: a known dtype, at most 8 dimensions, at most 4 GiB.
				if _, err := encoders.NewNDArray(f.Name, f.DType, f.Shape); err != nil {
					key := "shape"
					if !r.has("fields", "#"+strconv.Itoa(i), key) {
						key = "dtype"
					}
					add(at(key), "%v", err)
				}
			}
		}
		if f.Type == "packed" && len(r.Fields) > 1 {
			add(at("type"), "%s: a packed field must be the only field (rows are cut across documents)", where)
		}
		if f.Type == "packed" && s.Type != "jsonl" && s.Type != "parquet" {
			add(at("type"), "%s: packed text needs a jsonl or parquet source", where)
		}
	}
	if s.Type == "jsonl" {
		// A JSON key is extracted once, as one kind: fields sharing it must agree.
		kinds := map[string]string{}
		for i, f := range r.Fields {
			k := jsonKind(f)
			if prev, ok := kinds[f.From]; ok && prev != k {
				add(r.line("fields", "#"+strconv.Itoa(i), "from"), "field %s: key %s is read as %s by another field and as %s here", quote.Q(f.Name), quote.Q(f.From), prev, k)
			}
			kinds[f.From] = k
		}
	}
	if r.Format == "beton" {
		for i, f := range r.Fields {
			switch f.Type {
			case "int", "float", "bytes", "json":
			case "ndarray":
				if f.DType == "" || len(f.Shape) == 0 {
					add(r.line("fields", "#"+strconv.Itoa(i), "type"), "field %s: FFCV .beton needs a fixed shape and dtype for an ndarray", quote.Q(f.Name))
				}
			case "image":
				if f.Mode == "png" {
					add(r.line("fields", "#"+strconv.Itoa(i), "mode"), "field %s: FFCV .beton stores images as JPEG or raw RGB: use mode jpeg, smart or raw", quote.Q(f.Name))
				}
				if f.Channels != "3" {
					add(r.line("fields", "#"+strconv.Itoa(i), "channels"), "field %s: FFCV .beton images are 3-channel RGB (channels: 3)", quote.Q(f.Name))
				}
			default:
				add(r.line("fields", "#"+strconv.Itoa(i), "type"), "field %s: FFCV .beton cannot store a %s field; map it to bytes or json instead", quote.Q(f.Name), f.Type)
			}
			if len(f.Name) > 16 {
				add(r.line("fields", "#"+strconv.Itoa(i), "name"), "field %s: FFCV .beton field names are at most 16 bytes", quote.Q(f.Name))
			}
		}
	}
	r.validateCells(add)
	if p := c.problems(); p != nil {
		return r.problemsError(p)
	}
	return nil
}

// ParseMaxErrors parses max_errors: "" (no limit), a count ("100") or a percentage ("1%").
func ParseMaxErrors(s string) (count int64, fraction float64, err error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return 0, 0, nil
	case strings.HasSuffix(s, "%"):
		f, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
		if err != nil || f < 0 || f > 100 {
			return 0, 0, fmt.Errorf("%s is not a percentage between 0%% and 100%%", quote.Q(s))
		}
		return 0, f / 100, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, 0, fmt.Errorf("%s is not a count (e.g. 100) or a percentage (e.g. 1%%)", quote.Q(s))
	}
	return n, 0, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Applies reports whether the option key (a recipe key such as "max_resolution") applies to a
// field of type typ.
func Applies(typ, key string) bool { return slices.Contains(fieldKeys[typ], key) }

// jsonKind is how a JSONL value is read for a field: "a string", "an integer", "a number",
// "any JSON value" or "base64".
func jsonKind(f Field) string {
	switch f.Type {
	case "int":
		return "an integer"
	case "float":
		return "a number"
	case "json", "ndarray":
		return "any JSON value"
	case "bytes":
		if f.Base64 {
			return "base64"
		}
	}
	return "a string"
}
