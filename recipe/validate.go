package recipe

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/sources"
)

// Choices of the enumerated options, for the command's flags: the field types declare and
// check them; TestFieldLimits keeps these equal to theirs.
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
		r.fieldDefaults(i) // fields.go: the defaults of the field's type
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
	oneOf := func(line int, key, v string, choices []string) {
		if !slices.Contains(choices, v) {
			add(line, "%s: %s is not one of %s", key, quote.Q(v), strings.Join(choices, ", "))
		}
	}

	// Source.
	s := r.Source
	spec := r.validateSource(add) // sources.go
	cells := spec != nil && spec.Cells

	// Run options.
	if r.Output == "" {
		add(0, "output is required (in the recipe or as --output)")
	} else if fi := filepath.Base(r.Output); fi == "." || fi == "/" {
		add(r.line("output"), "output %s is not a file path", quote.Q(r.Output))
	}
	oneOf(r.line("format"), "format", r.Format, []string{"mldf", "beton", "scdl", "mds"})
	ps := int64(r.PageSize)
	if ps < MinPageSize || ps > MaxPageSize || ps&(ps-1) != 0 {
		add(r.line("page_size"), "page_size %s must be a power of two between %s and %s", FormatSize(ps), FormatSize(MinPageSize), FormatSize(MaxPageSize))
	} else if r.Format == "beton" && ps < MinBetonPageSize {
		add(r.line("page_size"), "page_size %s: FFCV .beton needs at least %s", FormatSize(ps), FormatSize(MinBetonPageSize))
	}
	in(r.line("workers"), "workers", int64(r.Workers), 1, MaxWorkers, "0 = all cores")
	in(r.line("chunk_size"), "chunk_size", int64(r.ChunkSize), 1, MaxChunkSize, fmt.Sprintf("0 = adaptive, %d samples or up to 1024 small ones", DefaultChunkSize))
	oneOf(r.line("on_error"), "on_error", r.OnError, []string{"skip", "fail"})
	if _, _, err := ParseMaxErrors(r.MaxErrors); err != nil {
		add(r.line("max_errors"), "max_errors: %v", err)
	}
	oneOf(r.line("log_format"), "log_format", r.LogFormat, []string{"text", "json"})
	if r.CheckpointEvery != "" {
		if d, err := time.ParseDuration(r.CheckpointEvery); err != nil || d < 0 {
			add(r.line("checkpoint_every"), "checkpoint_every %s is not a duration >= 0 (e.g. 30s, 5m; 0 = no checkpoints)", quote.Q(r.CheckpointEvery))
		}
	}
	if _, ok := r.keys["checkpoint_bytes"]; ok && r.CheckpointBytes <= 0 {
		add(r.line("checkpoint_bytes"), "checkpoint_bytes must be a size > 0 (e.g. 1GiB)")
	}
	if r.Mode != "" {
		oneOf(r.line("mode"), "mode", r.Mode, []string{"create", "append"})
	}
	if r.Base != "" && r.Mode != "append" {
		add(r.line("base"), "base is read only with mode: append")
	}
	if r.Mode == "append" && (r.Format != "mldf" || r.Shards > 0) {
		add(r.line("mode"), "mode: append writes one MLDF file: not with format %s or shards", r.Format)
	}
	if r.Shards < 0 || r.Shards > MaxShards {
		add(r.line("shards"), "shards %d must be 1..%d (0 = not sharded)", r.Shards, MaxShards)
	} else if r.Shard < 0 || (r.Shards > 0 && r.Shard >= r.Shards) || (r.Shards == 0 && r.Shard != 0) {
		add(r.line("shard"), "shard %d of %d: need 0 <= shard < shards", r.Shard, r.Shards)
	}

	r.validateDedup(add)

	// Fields.
	if len(r.Fields) == 0 && (spec == nil || spec.Table == nil) && r.Format != "scdl" { // a table: fields inferred from its schema
		add(r.line("fields"), "fields: at least one field is required")
	}
	seen := map[string]int{}
	fieldTypes := strings.Join(encoders.Types(), ", ")
	optionKeys := fieldOptionKeys()
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
		fs, known := encoders.Lookup(f.Type)
		if !known {
			add(at("type"), "%s: type %s is not one of %s", where, quote.Q(f.Type), fieldTypes)
			continue
		}
		for _, k := range optionKeys {
			if r.has("fields", "#"+strconv.Itoa(i), k) && !fs.Takes(k) {
				add(at(k), "%s: %s does not apply to a %s field", where, k, f.Type)
			}
		}
		if fs.Check != nil {
			fs.Check(f.Name, r.fieldOptions(i), encoders.NewChecker(where, func(key, msg string) { add(at(key), "%s", msg) }))
		}
		if f.Type == "packed" && len(r.Fields) > 1 {
			add(at("type"), "%s: a packed field must be the only field (rows are cut across documents)", where)
		}
		if f.Type == "packed" && (spec == nil || !spec.Records) {
			add(at("type"), "%s: packed text needs %s source", where, article(strings.Join(typesWhere(func(s *sources.Spec) bool { return s.Records }), " or ")))
		}
	}
	if spec != nil && spec.TypedReads {
		// A JSON key is extracted once, as one kind: fields sharing it must agree.
		kinds := map[string]string{}
		for i, f := range r.Fields {
			k := readKindName(r.readKind(i))
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
				if f.KeepPNG {
					add(r.line("fields", "#"+strconv.Itoa(i), "keep_png"), "field %s: FFCV .beton stores images as JPEG or raw RGB: drop keep_png", quote.Q(f.Name))
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
	if r.Format == "mds" {
		for i, f := range r.Fields {
			if f.KeepPNG {
				add(r.line("fields", "#"+strconv.Itoa(i), "keep_png"), "field %s: an MDS image column holds one format (smart mode's JPEG here): drop keep_png", quote.Q(f.Name))
			}
		}
	}
	if r.Format == "scdl" {
		if !cells && s.Type != "" {
			add(r.line("format"), "format scdl needs a single-cell source (%s), not %s", strings.Join(typesWhere(func(s *sources.Spec) bool { return s.Cells }), ", "), s.Type)
		}
		if len(r.Fields) > 0 {
			add(r.line("fields"), "fields do not apply to format scdl (an SCDL archive stores every cell's values, genes and obs table)")
		}
		if r.Shards > 0 {
			add(r.line("shards"), "format scdl cannot be sharded (one archive is written in parallel by one process)")
		}
	}
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
