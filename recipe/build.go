package recipe

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/encoders/audiofield"
	"github.com/mldf/convert/encoders/imagefield"
	"github.com/mldf/convert/encoders/textfield"
	"github.com/mldf/convert/format/beton"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
	"github.com/mldf/convert/sources/audio"
	"github.com/mldf/convert/sources/imagefolder"
	"github.com/mldf/convert/sources/jsonl"
	"github.com/mldf/convert/sources/tarsrc"
)

// Plan is a validated recipe resolved into a source and field encoders, ready to run.
type Plan struct {
	Recipe   *Recipe
	Source   sources.Source
	Bindings []pipeline.Binding
	// Inputs are the files the source reads (all of them, before sharding), in order: a
	// list read in order (a folder source's may hold 10^8 files).
	Inputs sources.InputList
	// Slice is the [lo, hi) range of Inputs this run converts (all of them unless sharded).
	Slice [2]int
	// Run, when set, replaces pipeline.Run (another container format, e.g. FFCV .beton).
	Run func(context.Context, pipeline.Config) (pipeline.Report, error)
	// Notes say what Build inferred (the fields of a Parquet schema), for validate to print.
	Notes []string
	// AllowEmpty is pipeline.Config.AllowEmpty for this run: the recipe's allow_empty, or a
	// shard whose slice holds no input (more shards than inputs).
	AllowEmpty bool

	classes map[string][]string // class names of class-label fields, by field name
	store   *objstore.Client    // reads the inputs named by URL; writes the class names beside a bucket output
}

// inputsOf returns the inputs of a source (every source is a sources.Lister).
func inputsOf(src sources.Source) (sources.InputList, error) {
	if s, ok := src.(sources.Lister); ok {
		return s.Inputs(), nil
	}
	return nil, fmt.Errorf("%w: source %T does not list its inputs", ErrRecipe, src)
}

// Build resolves a validated recipe (Defaults and Validate called) into a Plan. It opens the
// source (walking folders, expanding globs) but reads no sample. It is BuildWith with a
// background context and an objstore client of its own.
func Build(r *Recipe) (*Plan, error) {
	return BuildWith(context.Background(), r, nil)
}

// BuildWith is Build with the objstore client that lists and reads the inputs named by URL
// (s3://, gs://, az://, azblob://, file://; nil: a new client) and the context of those
// listings. Every input is checked here, before any work: a glob matching nothing, a
// missing object, bucket or folder, or denied access is one error naming its URL.
func BuildWith(ctx context.Context, r *Recipe, store *objstore.Client) (*Plan, error) {
	if isCellSource(r.Source.Type) {
		return buildCells(r) // scdl.go
	}
	if store == nil {
		store = objstore.New()
	}
	p := &Plan{Recipe: r, store: store}
	var src sources.Source
	var err error
	if r.Source.Type == "parquet" {
		src, err = buildParquet(ctx, r, p, store)
	} else {
		src, err = buildSource(ctx, r, store)
	}
	if err != nil {
		return nil, err
	}
	if p.Inputs, err = inputsOf(src); err != nil {
		return nil, err
	}
	p.Slice = [2]int{0, int(p.Inputs.Len())}
	p.Source = src
	if err := checkInputs(ctx, r, src); err != nil { // columns.go
		return nil, err
	}
	if r.Shards > 1 {
		lo, hi, err := sources.SliceList(p.Inputs, r.Shard, r.Shards)
		if err != nil {
			return nil, fmt.Errorf("slice %d of %d: %w", r.Shard, r.Shards, err)
		}
		p.Slice = [2]int{int(lo), int(hi)}
		if p.Source, err = rangeOf(src, int(lo), int(hi)); err != nil {
			return nil, err
		}
	}
	p.AllowEmpty = r.AllowEmpty || (r.Shards > 1 && p.Slice[0] == p.Slice[1])
	var alts []string
	for _, f := range r.Fields {
		if strings.Contains(f.From, "|") {
			alts = append(alts, f.From)
		}
	}
	if len(alts) > 0 {
		p.Source = &alternatives{Source: p.Source, columns: alts}
	}
	if r.Source.Type == "tar" && r.Source.UnknownMembers != "ignore" {
		p.Source = rejectUnknown(p.Source, r.Fields)
	}
	for _, f := range r.Fields {
		field, err := buildField(f)
		if err != nil {
			return nil, fmt.Errorf("%w: field %q: %w", ErrRecipe, f.Name, err)
		}
		if packed, ok := field.(*textfield.Packed); ok {
			// Packed rows are cut across documents: the source becomes the packer.
			p.Source = packed.Pack(p.Source, f.From)
			f.From = packed.Column()
		}
		required := f.Required == nil || *f.Required
		p.Bindings = append(p.Bindings, pipeline.Binding{Field: field, Column: f.From, Optional: !required})
	}
	if r.Format == "beton" {
		p.Run = func(ctx context.Context, cfg pipeline.Config) (pipeline.Report, error) {
			cfg.Container = beton.NewContainer
			return pipeline.Run(ctx, cfg)
		}
	}
	if err := finishParquet(p); err != nil {
		return nil, err
	}
	return p, nil
}

func buildSource(ctx context.Context, r *Recipe, store *objstore.Client) (sources.Source, error) {
	s := r.Source
	switch s.Type {
	case "images":
		layout := imagefolder.LayoutClasses
		if s.Flat {
			layout = imagefolder.LayoutFlat
		}
		return imagefolder.NewContext(ctx, s.Path, imagefolder.Options{Layout: layout, Store: store})
	case "audio_folder":
		return audio.OpenFolderContext(ctx, s.Path, audio.Options{Store: store})
	case "librispeech":
		return audio.OpenLibriSpeechContext(ctx, s.Path, audio.Options{Store: store})
	case "nemo_manifest":
		return audio.OpenManifestContext(ctx, s.Path, audio.Options{Store: store})
	case "tar":
		// Members no field reads are skipped unread (unknown_members still sees them).
		cols := make([]string, 0, len(r.Fields))
		for _, f := range r.Fields {
			cols = append(cols, strings.Split(f.From, "|")...)
		}
		return tarsrc.NewContext(ctx, s.Inputs, tarsrc.Options{Columns: cols, MaxMemberSize: int64(s.MaxMemberSize), Store: store})
	case "jsonl":
		return jsonl.New(s.Inputs, jsonlColumns(r.Fields), jsonl.Options{MaxLineSize: int(s.MaxLineBytes), Store: store})
	}
	return nil, fmt.Errorf("%w: source type %q", ErrRecipe, s.Type)
}

// jsonlColumns says which keys a JSONL source extracts, and as what, from the fields.
func jsonlColumns(fields []Field) []jsonl.Column {
	var cols []jsonl.Column
	seen := map[string]bool{}
	for _, f := range fields {
		kind := sample.KindString
		switch f.Type {
		case "int":
			kind = sample.KindInt
		case "float":
			kind = sample.KindFloat
		case "json", "ndarray":
			kind = sample.KindJSON
		case "bytes":
			if f.Base64 {
				kind = sample.KindBytes
			}
		}
		required := f.Required == nil || *f.Required
		keys := strings.Split(f.From, "|")
		for _, k := range keys {
			if seen[k] {
				continue // two fields from one key (text and tokens): extract it once
			}
			seen[k] = true
			cols = append(cols, jsonl.Column{Name: k, Key: k, Kind: kind, Required: required && len(keys) == 1})
		}
	}
	return cols
}

// unknownMembers marks samples that carry a member no field reads, so the error policy
// applies to them (WebDataset shards whose samples are not what the recipe expects).
type unknownMembers struct {
	sources.Source
	known map[string]bool
}

func rejectUnknown(src sources.Source, fields []Field) sources.Source {
	known := map[string]bool{}
	for _, f := range fields {
		known[f.From] = true
		for _, c := range strings.Split(f.From, "|") {
			known[c] = true
		}
	}
	return &unknownMembers{Source: src, known: known}
}

// Unwrap implements sources.Wrapper.
func (u *unknownMembers) Unwrap() sources.Source { return u.Source }

// Run implements sources.Source.
func (u *unknownMembers) Run(ctx context.Context, emit func(sample.Sample) error) error {
	return u.Source.Run(ctx, func(s sample.Sample) error {
		if s.Err == nil {
			var extra []string
			for _, c := range s.Values {
				if !u.known[c.Name] {
					extra = append(extra, c.Name)
				}
			}
			if len(extra) > 0 {
				sort.Strings(extra)
				s.Err = fmt.Errorf("%w: member extension(s) %s read by no field (map them, or set source.unknown_members: ignore)",
					ErrUnknownMember, strings.Join(extra, ", "))
			}
		}
		return emit(s)
	})
}

// ErrUnknownMember marks a tar sample with a member no field reads.
var ErrUnknownMember = errors.New("unknown member")

// alternatives gives every column written "a|b|c" the value of the first of a, b, c that a
// sample has (WebDataset shards mixing .jpg and .png members, JSONL with optional keys).
type alternatives struct {
	sources.Source
	columns []string
}

// Unwrap implements sources.Wrapper.
func (a *alternatives) Unwrap() sources.Source { return a.Source }

// Run implements sources.Source.
func (a *alternatives) Run(ctx context.Context, emit func(sample.Sample) error) error {
	return a.Source.Run(ctx, func(s sample.Sample) error {
		for _, alt := range a.columns {
			for _, c := range strings.Split(alt, "|") {
				if v, ok := s.Get(c); ok {
					s.Set(alt, v)
					break
				}
			}
		}
		return emit(s)
	})
}

// rangeOf cuts src to its inputs [lo, hi) (every source is a sources.Sharder).
func rangeOf(src sources.Source, lo, hi int) (sources.Source, error) {
	if s, ok := src.(sources.Sharder); ok {
		return s.Range(lo, hi)
	}
	return nil, fmt.Errorf("%w: source %T cannot be sharded", ErrRecipe, src)
}

func buildField(f Field) (encoders.Field, error) {
	switch f.Type {
	case "int":
		if len(f.Names) > 0 {
			return encoders.NewClassLabel(f.Name, f.Names)
		}
		return encoders.NewInt(f.Name)
	case "float":
		return encoders.NewFloat(f.Name)
	case "bytes":
		return encoders.NewBytes(f.Name)
	case "json":
		return encoders.NewJSON(f.Name)
	case "ndarray":
		return encoders.NewNDArray(f.Name, f.DType, f.Shape)
	case "image":
		mode, err := imagefield.ParseMode(f.Mode)
		if err != nil {
			return nil, err
		}
		filter, err := imagefield.ParseFilter(f.Filter)
		if err != nil {
			return nil, err
		}
		ch, _ := strconv.Atoi(f.Channels)
		return imagefield.New(f.Name, imagefield.Options{Mode: mode, MaxResolution: f.MaxResolution,
			JPEGQuality: f.JPEGQuality, Filter: filter, Channels: ch, MaxPixels: f.MaxPixels})
	case "audio", "flac":
		o := audiofield.Options{SampleRate: f.SampleRate, Mono: f.Channels == "mono",
			MaxDuration: f.MaxDuration, SkipLong: f.OnLong == "skip"}
		if f.Type == "flac" {
			return audiofield.NewCompressed(f.Name, o)
		}
		switch f.SampleType {
		case "int32":
			o.Format = audiofield.Int32
		case "float32":
			o.Format = audiofield.Float32
		default:
			o.Format = audiofield.Int16
		}
		return audiofield.NewWaveform(f.Name, o)
	case "text":
		return textfield.NewRaw(f.Name)
	case "tokens":
		return textfield.NewTokenized(f.Name, textfield.TokenizedOptions{Tokenizer: f.Tokenizer, AppendEnd: f.AppendEOT})
	case "packed":
		o := textfield.PackOptions{Tokenizer: f.Tokenizer, SeqLen: f.SeqLen, PadLast: f.Remainder == "pad"}
		if f.PadID != nil {
			o.PadID = uint32(*f.PadID)
		}
		return textfield.NewPacked(f.Name, o)
	}
	return nil, fmt.Errorf("unknown field type %q", f.Type)
}
