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
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
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
	OnError   string  `yaml:"on_error"`   // skip (default) | fail
	MaxErrors string  `yaml:"max_errors"` // a count ("100") or a fraction ("1%"); empty: no limit
	Rejects   string  `yaml:"rejects"`    // rejects JSONL path; default OUTPUT.rejects.jsonl
	Report    string  `yaml:"report"`     // report JSON path; default OUTPUT.report.json
	LogFormat string  `yaml:"log_format"` // text | json
	Shard     int     `yaml:"shard"`
	Shards    int     `yaml:"shards"`
	// AllowEmpty lets a run that writes no sample succeed (an empty output); otherwise it
	// fails and writes nothing.
	AllowEmpty bool `yaml:"allow_empty"`

	nodes *yaml.Node // for line numbers
	file  string     // the file Load read
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

// Problems is every error found in a recipe, each with its line when known.
type Problems []string

func (p Problems) Error() string {
	if len(p) == 1 {
		return p[0]
	}
	return fmt.Sprintf("%d problems:\n  %s", len(p), strings.Join(p, "\n  "))
}

// ErrRecipe is wrapped by every recipe error.
var ErrRecipe = errors.New("invalid recipe")

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expandEnv replaces ${VAR} and ${VAR:-default}; an unset variable without a default is an
// error naming its line.
func expandEnv(src []byte, lookup func(string) (string, bool)) ([]byte, Problems) {
	var probs Problems
	lines := bytes.Split(src, []byte("\n"))
	for i, line := range lines {
		lines[i] = envRef.ReplaceAllFunc(line, func(m []byte) []byte {
			sub := envRef.FindSubmatch(m)
			if v, ok := lookup(string(sub[1])); ok {
				return []byte(v)
			}
			if sub[2] != nil {
				return sub[3]
			}
			probs = append(probs, fmt.Sprintf("line %d: environment variable %s is not set (use ${%s:-default} for a default)", i+1, sub[1], sub[1]))
			return m
		})
	}
	return bytes.Join(lines, []byte("\n")), probs
}

// Load reads and parses a recipe file. It does not validate; call Validate after applying
// flag overrides.
func Load(path string) (*Recipe, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("recipe: %w", err)
	}
	r, err := Parse(src, os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("recipe %s: %w", path, err)
	}
	r.file = path
	return r, nil
}

// Parse parses recipe YAML, expanding ${VAR} with lookup. Unknown keys and wrong types are all
// reported at once with their lines.
func Parse(src []byte, lookup func(string) (string, bool)) (*Recipe, error) {
	src, probs := expandEnv(src, lookup)
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRecipe, Problems{yamlMessage(err)})
	}
	r := &Recipe{nodes: &root}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(r); err != nil && !errors.Is(err, io.EOF) {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			for _, e := range te.Errors {
				probs = append(probs, strings.Replace(e, "not found in type recipe.", "is not a known key of ", 1))
			}
		} else {
			probs = append(probs, yamlMessage(err))
		}
	}
	if len(probs) > 0 {
		sort.SliceStable(probs, func(i, j int) bool { return lineNo(probs[i]) < lineNo(probs[j]) })
		return nil, fmt.Errorf("%w: %w", ErrRecipe, probs)
	}
	return r, nil
}

func yamlMessage(err error) string { return strings.TrimPrefix(err.Error(), "yaml: ") }

func lineNo(s string) int {
	var n int
	if _, err := fmt.Sscanf(s, "line %d:", &n); err != nil {
		return 1 << 30
	}
	return n
}

// find walks path (mapping keys, or "#i" for a sequence index) and returns the node there and
// the line of its key; when the path stops early it returns nil and the line of the deepest
// node it reached.
func (r *Recipe) find(path ...string) (n *yaml.Node, line int) {
	if r.nodes == nil || len(r.nodes.Content) == 0 {
		return nil, 0
	}
	n = r.nodes.Content[0]
	line = n.Line
	for _, p := range path {
		var next *yaml.Node
		switch {
		case strings.HasPrefix(p, "#") && n.Kind == yaml.SequenceNode:
			if i, _ := strconv.Atoi(p[1:]); i < len(n.Content) {
				next, line = n.Content[i], n.Content[i].Line
			}
		case n.Kind == yaml.MappingNode:
			for k := 0; k+1 < len(n.Content); k += 2 {
				if n.Content[k].Value == p {
					next, line = n.Content[k+1], n.Content[k].Line
				}
			}
		}
		if next == nil {
			return nil, line
		}
		n = next
	}
	return n, line
}

// line returns the line of the key at path, or of the deepest part of it that exists (0
// without YAML, e.g. a recipe built from flags).
func (r *Recipe) line(path ...string) int {
	_, line := r.find(path...)
	return line
}

// has reports whether the key at path is present in the YAML (as opposed to defaulted).
func (r *Recipe) has(path ...string) bool {
	n, _ := r.find(path...)
	return n != nil
}
