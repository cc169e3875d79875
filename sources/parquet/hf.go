package parquet

import (
	"bytes"
	"encoding/json"
	"fmt"
	pq "github.com/parquet-go/parquet-go"
	"strings"

	"github.com/parquet-go/parquet-go/format"
)

// Field is a field inferred from a file's schema and Hugging Face features: what a recipe
// would say for the column (see Infer).
type Field struct {
	Name  string   // field name (the column's name)
	Type  string   // recipe field type: image, flac, int, float, text, bytes, json, tokens, ndarray
	From  string   // the column's path
	DType string   // ndarray with a fixed shape
	Shape []uint64 // ndarray with a fixed shape
	// Classes are a ClassLabel's names (label i is Classes[i]).
	Classes []string
	// Why says what the mapping was inferred from ("Hugging Face Image", "STRING column").
	Why string
}

// Feature is one Hugging Face feature: its _type and the members the mapping uses.
type Feature struct {
	Type    string          `json:"_type"`
	DType   string          `json:"dtype"`
	Names   []string        `json:"names"`
	Length  *int            `json:"length"`
	Shape   []int           `json:"shape"`
	Feature json.RawMessage `json:"feature"`
}

// Features returns the Hugging Face features recorded in a file's key-value metadata under
// "huggingface" ({"info": {"features": {...}}}), by column name; nil when there are none.
func Features(meta map[string]string) (map[string]Feature, error) {
	raw, ok := meta["huggingface"]
	if !ok {
		return nil, nil
	}
	var doc struct {
		Info struct {
			Features map[string]json.RawMessage `json:"features"`
		} `json:"info"`
	}
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		return nil, fmt.Errorf("%w: the \"huggingface\" metadata is not JSON: %v", ErrColumn, err)
	}
	out := map[string]Feature{}
	for name, r := range doc.Info.Features {
		var f Feature
		if bytes.HasPrefix(bytes.TrimSpace(r), []byte("{")) {
			if err := json.Unmarshal(r, &f); err != nil {
				return nil, fmt.Errorf("%w: Hugging Face feature %q: %v", ErrColumn, name, err)
			}
		}
		if f.Type == "" {
			f.Type = "dict"
			if bytes.HasPrefix(bytes.TrimSpace(r), []byte("[")) {
				f.Type = "list"
			}
		}
		out[name] = f
	}
	return out, nil
}

// maxName is the longest field name MLDF stores.
const maxName = 63

// Infer maps every top-level column of a schema to a field, using the Hugging Face features
// when the file has them: Image → image, Audio → flac, ClassLabel → int with its class
// names, Value(string) → text, integers and booleans → int, floats → float, binary → bytes,
// a list of integers → tokens (ids as stored), a fixed-length list (or ArrayND) of numbers →
// ndarray of that dtype and shape, other flat lists of numbers → ndarray (.npy per sample), and
// anything else (structs, lists of text, maps) → json. Columns it cannot name (a name longer
// than 63 bytes) are left out with a note.
func Infer(s *Schema, meta map[string]string) ([]Field, []string, error) {
	feats, err := Features(meta)
	if err != nil {
		return nil, nil, err
	}
	var fields []Field
	var notes []string
	for _, c := range s.Root.Columns() {
		if len(c.Name()) > maxName || c.Name() == "" {
			notes = append(notes, fmt.Sprintf("column %q left out: a field name is at most %d bytes (map it with a named field)", c.Name(), maxName))
			continue
		}
		f := s.inferColumn(c, feats)
		fields = append(fields, f)
	}
	if len(fields) == 0 {
		return nil, notes, fmt.Errorf("%w: no column to map (columns: %s)", ErrColumn, s)
	}
	return fields, notes, nil
}

var intDTypes = map[string]string{"int8": "|i1", "int16": "<i2", "int32": "<i4", "int64": "<i8",
	"uint8": "|u1", "uint16": "<u2", "uint32": "<u4", "uint64": "<u8", "bool": "|b1"}
var floatDTypes = map[string]string{"float16": "<f2", "float32": "<f4", "float64": "<f8", "float": "<f4", "double": "<f8"}

func (s *Schema) inferColumn(c *pq.Column, feats map[string]Feature) Field {
	f := Field{Name: c.Name(), From: c.Name()}
	feat, hf := feats[c.Name()]
	if hf {
		switch feat.Type {
		case "Image":
			if _, ok := s.BinaryStruct(c); ok {
				f.Type, f.Why = "image", "Hugging Face Image {bytes, path}"
				return f
			}
		case "Audio":
			if _, ok := s.BinaryStruct(c); ok {
				f.Type, f.Why = "flac", "Hugging Face Audio {bytes, path}"
				return f
			}
		case "ClassLabel":
			if c.Leaf() && !inRepeated(c) && (s.phys(c) == format.Int32 || s.phys(c) == format.Int64) {
				f.Type, f.Classes = "int", feat.Names
				f.Why = fmt.Sprintf("Hugging Face ClassLabel (%d names)", len(feat.Names))
				if len(feat.Names) == 0 {
					f.Why = "Hugging Face ClassLabel without names"
				}
				return f
			}
		case "Sequence", "List", "LargeList":
			var elem Feature
			if err := json.Unmarshal(feat.Feature, &elem); err == nil && elem.Type == "Value" {
				if _, isInt := intDTypes[elem.DType]; isInt && elem.DType != "bool" {
					if _, _, err := s.npyLeaf(c); err == nil {
						f.Type, f.Why = "tokens", "Hugging Face "+feat.Type+" of "+elem.DType+" (token ids, stored as given)"
						return f
					}
				}
				if dt, isFloat := floatDTypes[elem.DType]; isFloat {
					if _, dims, err := s.npyLeaf(c); err == nil && dims == 1 {
						f.Type = "ndarray"
						if feat.Length != nil && *feat.Length > 0 {
							f.DType, f.Shape = dt, []uint64{uint64(*feat.Length)}
							f.Why = fmt.Sprintf("Hugging Face %s of %s, length %d", feat.Type, elem.DType, *feat.Length)
						} else {
							f.Why = fmt.Sprintf("Hugging Face %s of %s (a .npy per sample)", feat.Type, elem.DType)
						}
						return f
					}
				}
			}
		case "Array2D", "Array3D", "Array4D", "Array5D":
			if _, dims, err := s.npyLeaf(c); err == nil && dims == len(feat.Shape) {
				f.Type = "ndarray"
				dt := floatDTypes[feat.DType]
				if dt == "" {
					dt = intDTypes[feat.DType]
				}
				fixed := dt != ""
				for _, d := range feat.Shape {
					if d <= 0 {
						fixed = false
					}
				}
				if fixed {
					f.DType = dt
					for _, d := range feat.Shape {
						f.Shape = append(f.Shape, uint64(d))
					}
				}
				f.Why = "Hugging Face " + feat.Type
				return f
			}
		}
	}
	f.Type, f.Why = s.schemaType(c)
	if hf && feat.Type != "" {
		f.Why = "Hugging Face " + feat.Type + ": " + f.Why
	}
	return f
}

// schemaType maps a column by its Parquet type alone.
func (s *Schema) schemaType(c *pq.Column) (string, string) {
	if c.Leaf() && !c.Repeated() {
		if _, dec := s.decimalScale(c); dec {
			return "text", "DECIMAL column (exact decimal text)"
		}
		switch {
		case s.phys(c) == format.Boolean || s.phys(c) == format.Int32 || s.phys(c) == format.Int64 || s.phys(c) == format.Int96:
			return "int", s.Describe(c) + " column"
		case s.phys(c) == format.Float || s.phys(c) == format.Double || s.isFloat16(c):
			return "float", s.Describe(c) + " column"
		case s.isJSONNode(c):
			return "json", "JSON column"
		case s.isStringNode(c):
			return "text", "STRING column"
		}
		return "bytes", s.Describe(c) + " column"
	}
	if _, ok := s.BinaryStruct(c); ok {
		return "bytes", "struct with a binary \"bytes\" member (no Hugging Face feature says image or audio: declare the field's type)"
	}
	if leaf, dims, err := s.npyLeaf(c); err == nil && dims == 1 {
		if (s.phys(leaf) == format.Int32 || s.phys(leaf) == format.Int64) && s.unsignedWidth(leaf) != 64 {
			return "tokens", "list of integers (token ids, stored as given)"
		}
		return "ndarray", fmt.Sprintf("list of %s (a .npy per sample)", strings.ToLower(s.phys(leaf).String()))
	} // nested lists may be ragged: JSON
	return "json", s.Describe(c) + " (as JSON)"
}

// ReadSchema opens one file's footer and returns its schema and key-value metadata.
func ReadSchema(name string, open Opener) (*Schema, map[string]string, error) {
	if open == nil {
		open = OpenFile
	}
	f, err := openFile(open, name)
	if err != nil {
		return nil, nil, err
	}
	defer f.close()
	return f.schema, f.meta, nil
}

// ColumnFor says how a field of the given recipe type reads the column at path: json reads
// anything as JSON; ndarray reads a list as a .npy; tokens reads a list of ids as JSON (text
// stays text); every other type reads the value (a {bytes, path} struct as its bytes).
func ColumnFor(s *Schema, name, path, fieldType string) (Column, error) {
	n := s.Lookup(path)
	if n == nil || n == s.Root {
		return Column{}, fmt.Errorf("%w: no column %q (columns: %s)", ErrColumn, path, s)
	}
	c := Column{Name: name, Path: path}
	switch fieldType {
	case "json":
		c.As = AsJSON
	case "ndarray":
		if !n.Leaf() || n.Repeated() {
			c.As = AsNPY
		}
	case "tokens", "packed":
		if !n.Leaf() || n.Repeated() {
			c.As = AsJSON
		}
	}
	if _, err := newPlan(s, []Column{c}); err != nil {
		return Column{}, err
	}
	return c, nil
}
