// Package recipe parses and validates conversion recipes: the YAML files users keep in their
// repos, and the same options given as flags. It reports every problem at once, each with its
// line, before any work starts, and resolves a valid recipe into a runnable plan.
package recipe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/objstore"
)

// Recipe is one conversion: a source, the fields to write, and run options. Every key has the
// same name as its command-line flag (with '-' for '_').
type Recipe struct {
	Source    Source  `yaml:"source"`
	Fields    []Field `yaml:"fields"`
	Output    string  `yaml:"output"`
	Format    string  `yaml:"format"` // mldf (default) | beton | scdl
	Workers   int     `yaml:"workers"`
	PageSize  Size    `yaml:"page_size"`
	ChunkSize int     `yaml:"chunk_size"`
	Checksums *bool   `yaml:"checksums"`
	// DirectIO writes a local output around the page cache (O_DIRECT) where its file system
	// takes direct writes, as by default (nil); false writes it through the page cache, so
	// that it is in the cache when the run ends (for a training job reading it right away),
	// or where the file system's direct writes are slow. A bucket output ignores it, as
	// does format scdl (written through the page cache); the MLDF file that format mds and
	// mode append write first, and read back at once, always goes through the cache. Omitted from the recipe's hash when unset, so
	// recipes without it hash as before.
	DirectIO  *bool  `yaml:"direct_io,omitempty"`
	OnError   string `yaml:"on_error"`   // skip (default) | fail
	MaxErrors string `yaml:"max_errors"` // a count ("100") or a fraction ("1%"); empty: no limit
	Rejects   string `yaml:"rejects"`    // rejects JSONL path; default OUTPUT.rejects.jsonl
	Report    string `yaml:"report"`     // report JSON path; default OUTPUT.report.json
	LogFormat string `yaml:"log_format"` // text | json
	Shard     int    `yaml:"shard"`
	Shards    int    `yaml:"shards"`
	// AllowEmpty accepts an input that yields no sample and a run that writes none (an empty
	// output); without it, validate and run refuse an empty input (an empty folder, a folder
	// of images without class subfolders) and a run that writes no sample fails and writes
	// nothing.
	AllowEmpty bool `yaml:"allow_empty"`
	// Dedup drops (or only reports) the samples whose payloads in some fields are
	// byte-identical to an earlier sample's; nil keeps every sample.
	Dedup *Dedup `yaml:"dedup"`
	// Mode is create (default: write the output) or append: add the samples to an existing
	// MLDF file, Base (default: the output), as `convert append BASE RECIPE` does
	// (docs/APPEND.md).
	Mode string `yaml:"mode"`
	// Base is the MLDF file mode append adds to; "" means the output.
	Base string `yaml:"base"`
	// CheckpointEvery is how often a single run checkpoints so that a killed run resumes
	// (docs/RESUME.md): a Go duration ("30s", "2m"); "0" turns checkpoints off; "" means the
	// default (30s). The flag --checkpoint-every overrides it.
	CheckpointEvery string `yaml:"checkpoint_every"`
	// CheckpointBytes also checkpoints after this many payload bytes; 0 means the default
	// (1GiB). The flag --checkpoint-bytes overrides it.
	CheckpointBytes Size `yaml:"checkpoint_bytes"`

	keys   map[string]int // the line of every key present, by path ("fields/#2/jpeg_quality")
	parsed *collector     // the problems found while parsing, reported by Validate
	file   string         // the file Load read
}

// File returns the path of the file the recipe was loaded from ("" for a recipe built in
// code or from flags).
func (r *Recipe) File() string { return r.file }

// Source says what to read.
type Source struct {
	// Type: images | audio_folder | librispeech | nemo_manifest | tar | jsonl | parquet | h5ad | mtx10x | scdl
	Type string `yaml:"type"`
	// Path is the root folder (images, audio_folder, librispeech) or the manifest file.
	Path string `yaml:"path"`
	// Inputs are files, globs or brace ranges (tar, jsonl, parquet).
	Inputs []string `yaml:"inputs"`
	// Flat reads an image folder without class subfolders (no label column).
	Flat bool `yaml:"flat"`
	// MaxLineBytes bounds one JSONL line (jsonl).
	MaxLineBytes Size `yaml:"max_line_bytes"`
	// MaxMemberSize bounds one tar member read into memory (tar); a larger one makes its
	// sample a reject, checked against the tar header before reading.
	MaxMemberSize Size `yaml:"max_member_size"`
	// UnknownMembers says what a tar member that no field reads does to its sample: reject
	// (default: the error policy applies) or ignore.
	UnknownMembers string `yaml:"unknown_members"`
	// Matrix is the h5ad matrix to read: X (default) or raw (raw/X).
	Matrix string `yaml:"matrix"`
}

// Dedup is the recipe's dedup: {fields: [image], mode: drop|report}.
type Dedup struct {
	// Fields are output field names; a sample is a duplicate when its payloads in all of
	// them equal an earlier sample's.
	Fields []string `yaml:"fields"`
	// Mode is drop (default: leave the duplicate out) or report (write it and list it).
	Mode string `yaml:"mode"`
}

// Field is one output field and its options. Options that do not apply to the field's type
// are errors.
type Field struct {
	Name     string `yaml:"name"`
	Type     string `yaml:"type"` // int float bytes json ndarray image audio flac text tokens packed
	From     string `yaml:"from"` // source column; default: the field name
	Required *bool  `yaml:"required"`

	// image
	Mode          string `yaml:"mode"` // jpeg | png | raw | smart
	MaxResolution int    `yaml:"max_resolution"`
	JPEGQuality   int    `yaml:"jpeg_quality"`
	Filter        string `yaml:"filter"`
	Channels      string `yaml:"channels"` // image: 1|3|4; audio: mono|keep
	MaxPixels     int64  `yaml:"max_pixels"`
	KeepPNG       bool   `yaml:"keep_png"` // smart: PNGs stay PNG (as they are when they need no change)

	// audio
	SampleRate  int     `yaml:"sample_rate"`
	SampleType  string  `yaml:"sample_type"` // int16 | int32 | float32
	MaxDuration float64 `yaml:"max_duration"`
	OnLong      string  `yaml:"on_long"` // truncate | skip

	// text
	Tokenizer string `yaml:"tokenizer"`
	AppendEOT bool   `yaml:"append_eot"`
	SeqLen    int    `yaml:"seq_len"`
	Remainder string `yaml:"remainder"` // drop | pad
	PadID     *int   `yaml:"pad_id"`

	// ndarray
	DType string   `yaml:"dtype"`
	Shape []uint64 `yaml:"shape"`

	// Base64 decodes a JSONL string value into BYTES.
	Base64 bool `yaml:"base64"`

	// Names are the class names of an int field (label i is Names[i]): stored in the file,
	// and a value may be given as a name (a WebDataset .cls member holding "dog").
	Names []string `yaml:"names"`
}

// Size is a byte count written as a number or with a unit: 4096, 64KiB, 2MiB, 1GiB, 2M.
type Size int64

// UnmarshalYAML implements yaml.Unmarshaler.
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*s = Size(v)
	return nil
}

// ParseSize parses a byte count with an optional unit (K, KiB, M, MiB, G, GiB; powers of 1024).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.m
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size (use a number of bytes or e.g. 2MiB)", s)
	}
	return n * mult, nil
}

// Problems is every error found in a recipe, each with its line when known, in line order:
// at most MaxProblems of them, then "(and N more)" when there were more.
type Problems []string

// Error lists the problems, one a line.
func (p Problems) Error() string {
	if len(p) == 1 {
		return p[0]
	}
	n, more := len(p), ""
	if strings.HasPrefix(p[n-1], moreMark) {
		var k int
		fmt.Sscanf(p[n-1], moreMark+"%d", &k)
		n, more = n-1+k, fmt.Sprintf(" (the first %d by line)", n-1)
	}
	return fmt.Sprintf("%d problems%s:\n  %s", n, more, strings.Join(p, "\n  "))
}

// ErrRecipe is wrapped by every recipe error.
var ErrRecipe = errors.New("invalid recipe")

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expandEnv replaces ${VAR} and ${VAR:-default}; an unset variable without a default is a
// problem naming its line.
func expandEnv(src []byte, lookup func(string) (string, bool), probs *collector) []byte {
	if !bytes.Contains(src, []byte("${")) {
		return src
	}
	lines := bytes.Split(src, []byte("\n"))
	for i, line := range lines {
		if !bytes.Contains(line, []byte("${")) {
			continue
		}
		lines[i] = envRef.ReplaceAllFunc(line, func(m []byte) []byte {
			sub := envRef.FindSubmatch(m)
			if v, ok := lookup(string(sub[1])); ok {
				return []byte(v)
			}
			if sub[2] != nil {
				return sub[3]
			}
			probs.add(i+1, "environment variable %s is not set (use ${%s:-default} for a default)", quote.S(string(sub[1])), quote.S(string(sub[1])))
			return m
		})
	}
	return bytes.Join(lines, []byte("\n"))
}

// ErrTooLarge means a recipe file is larger than MaxRecipeBytes.
var ErrTooLarge = errors.New("recipe too large")

// Load reads and parses a recipe file: a regular file of at most MaxRecipeBytes (a named
// pipe or a device is refused without blocking). Relative paths in it (source.path,
// source.inputs, output, rejects, report) are resolved against the recipe's own folder, as
// docker compose does; URLs and absolute paths are kept. It does not validate: problems of
// keys and types are kept for Validate, which reports them with every other problem, so call
// Validate after applying flag overrides (whose paths stay relative to the current folder).
func Load(path string) (*Recipe, error) {
	src, err := readRecipe(path)
	if err != nil {
		return nil, err
	}
	r, err := Parse(src, os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("recipe %s: %w", quote.S(path), err)
	}
	r.file = path
	r.resolvePaths(filepath.Dir(path))
	return r, nil
}

// readRecipe reads a recipe file, refusing anything but a regular file of at most
// MaxRecipeBytes.
func readRecipe(path string) ([]byte, error) {
	f, st, err := inputfile.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("recipe: %w", err)
	}
	defer f.Close()
	tooLarge := fmt.Errorf("recipe %s: %w: over %s (the limit is %d bytes)", quote.S(path), ErrTooLarge, FormatSize(MaxRecipeBytes), MaxRecipeBytes)
	if st.Size() > MaxRecipeBytes {
		return nil, tooLarge
	}
	src, err := io.ReadAll(io.LimitReader(f, MaxRecipeBytes+1))
	if err != nil {
		return nil, fmt.Errorf("recipe: %w", err)
	}
	if len(src) > MaxRecipeBytes { // it grew since Stat
		return nil, tooLarge
	}
	return src, nil
}

// resolvePaths makes the recipe's relative paths relative to dir, the recipe's folder.
func (r *Recipe) resolvePaths(dir string) {
	if dir == "" || dir == "." {
		return
	}
	rel := func(p string) string { return objstore.Resolve(dir, p) }
	r.Source.Path = rel(r.Source.Path)
	for i, in := range r.Source.Inputs {
		r.Source.Inputs[i] = rel(in)
	}
	r.Output, r.Rejects, r.Report = rel(r.Output), rel(r.Rejects), rel(r.Report)
	r.Base = rel(r.Base)
}

// Parse parses recipe YAML, expanding ${VAR} with lookup. It returns an error only when
// the text is not a YAML mapping (or is larger than MaxRecipeBytes); unknown keys, values
// of the wrong type and unset variables are kept, each with its key and line, and reported
// by Validate together with every other problem.
func Parse(src []byte, lookup func(string) (string, bool)) (*Recipe, error) {
	if len(src) > MaxRecipeBytes {
		return nil, fmt.Errorf("%w: %w: %d bytes (the limit is %d)", ErrRecipe, ErrTooLarge, len(src), MaxRecipeBytes)
	}
	probs := &collector{}
	src = expandEnv(src, lookup, probs)
	if len(src) > MaxRecipeBytes {
		return nil, fmt.Errorf("%w: %w: %d bytes after expanding ${VAR}s (the limit is %d)", ErrRecipe, ErrTooLarge, len(src), MaxRecipeBytes)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRecipe, Problems{yamlMessage(err)})
	}
	r := &Recipe{keys: map[string]int{}, parsed: probs}
	if len(root.Content) == 0 {
		return r, nil // empty: Validate says what is missing
	}
	doc := root.Content[0]
	for doc.Kind == yaml.AliasNode {
		doc = doc.Alias
	}
	if doc.Kind == yaml.ScalarNode && doc.Tag == "!!null" {
		return r, nil
	}
	if doc.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%w: %w", ErrRecipe, Problems{fmt.Sprintf("line %d: a recipe is a mapping of keys (source, fields, output...), not %s", doc.Line, kindName(doc))})
	}
	r.keys[""] = doc.Line
	d := &decoder{probs: probs, keys: r.keys, budget: 2*countNodes(&root) + 1<<16}
	d.mapping(doc, reflect.ValueOf(r).Elem(), "", "")
	if d.exhausted > 0 {
		return nil, fmt.Errorf("%w: %w", ErrRecipe, Problems{fmt.Sprintf("line %d: the recipe's aliases (*name) expand to more values than a recipe has", d.exhausted)})
	}
	return r, nil
}

func yamlMessage(err error) string { return strings.TrimPrefix(err.Error(), "yaml: ") }

// line returns the line of the key at path (mapping keys, or "#i" for a sequence index),
// or of the deepest part of it that exists (0 without YAML, e.g. a recipe built from flags).
func (r *Recipe) line(path ...string) int {
	if r.keys == nil {
		return 0
	}
	for n := len(path); n >= 0; n-- {
		if l, ok := r.keys[strings.Join(path[:n], "/")]; ok {
			return l
		}
	}
	return 0
}

// refused reports whether the key at path is present with a value of the wrong type (a
// problem already reported).
func (r *Recipe) refused(path ...string) bool {
	_, ok := r.keys[refusedMark+strings.Join(path, "/")]
	return ok
}

// has reports whether the key at path is present in the YAML with a value of its type (as
// opposed to defaulted).
func (r *Recipe) has(path ...string) bool {
	_, ok := r.keys[strings.Join(path, "/")]
	return ok
}
