package loader

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/mldf/convert/internal/quote"
)

// ErrPlan: a plan that cannot run on the file (unknown op or field, bad parameter, an op on a
// field type it does not decode).
var ErrPlan = errors.New("loader: bad plan")

// PlanSpec is the JSON plan: which fields to decode and the ops of each.
type PlanSpec struct {
	// Seed keys the random ops (crop boxes, flips, audio offsets).
	Seed   uint64      `json:"seed"`
	Fields []FieldSpec `json:"fields"`
}

// FieldSpec is one field's pipeline: a decoder op first, then transforms.
type FieldSpec struct {
	Field string            `json:"field"`
	Ops   []json.RawMessage `json:"ops"`
}

// opSpec holds the parameters of every op; each op reads its own and refuses the others.
type opSpec struct {
	Op       string          `json:"op"`
	Size     json.RawMessage `json:"size"`
	Scale    json.RawMessage `json:"scale"`
	Ratio    json.RawMessage `json:"ratio"`
	P        *float64        `json:"p"`
	Mean     []float64       `json:"mean"`
	Std      []float64       `json:"std"`
	DType    string          `json:"dtype"`
	Shape    []int           `json:"shape"`
	Channels *int            `json:"channels"`
	Length   *int            `json:"length"`
	Offset   string          `json:"offset"`
	Pad      *float64        `json:"pad"`
	Interp   string          `json:"interpolation"`
	JPEG     string          `json:"jpeg"`

	keys map[string]bool
}

// has reports whether the op's JSON set key.
func (o *opSpec) has(key string) bool { return o.keys[key] }

// allow checks that the op set no parameter outside keys.
func (o *opSpec) allow(keys ...string) error {
	for k := range o.keys {
		if k == "op" {
			continue
		}
		found := false
		for _, a := range keys {
			if a == k {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("unknown parameter %s (%s takes %s)", quote.Q(k), o.Op, strings.Join(keys, ", "))
		}
	}
	return nil
}

func parseOp(raw json.RawMessage) (*opSpec, error) {
	var o opSpec
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return nil, err
	}
	o.keys = make(map[string]bool, len(keys))
	for k := range keys {
		o.keys[k] = true
	}
	if o.Op == "" {
		return nil, errors.New(`no "op" name`)
	}
	return &o, nil
}

// Output describes one output buffer of a plan, per sample.
type Output struct {
	// Name is the field's name.
	Name string `json:"name"`
	// DType is a numpy dtype: "uint8", "int16", "int64", "float16", "float32", "float64", or
	// an NDARRAY field's descr such as "<f4".
	DType string `json:"dtype"`
	// Shape is one sample's shape; the batch buffer is [n] + Shape.
	Shape []int `json:"shape"`
	// Variable outputs (Bytes, Text, JSON) are an int64 offsets buffer of n+1 entries and a
	// data buffer of the sizes BatchBytes returns.
	Variable bool `json:"variable"`
	// Kind is the op that made the output ("Int", "Bytes", "Text", "JSON", "NDArray", "Image",
	// "Audio"), so that a caller knows how to present a variable output.
	Kind string `json:"kind"`

	itemSize int // bytes per sample of a fixed output
}

// stage decodes one field for a plan.
type stage interface {
	// decode writes sample i's value v (field f) into dst, the sample's slice of the output
	// (fixed outputs) or its data slice (variable ones).
	decode(w *worker, rc runCtx, v value, dst []byte) error
}

// runCtx is what a random op needs to draw its parameters: a pure function of them.
type runCtx struct {
	seed   uint64
	epoch  int64
	sample int64
	field  int
}

// rand returns a generator for op position pos of this sample's field.
func (rc runCtx) rand(pos int) prng {
	return prng{s: mix(mix(mix(mix(rc.seed^0x6c6f61646572)^uint64(rc.epoch))^uint64(rc.sample)) ^ uint64(rc.field)<<16 ^ uint64(pos))}
}

// prng is SplitMix64: a tiny generator whose stream depends only on its start.
type prng struct{ s uint64 }

func (p *prng) uint64() uint64 {
	p.s += 0x9e3779b97f4a7c15
	z := p.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// float64 returns a uniform value in [0, 1).
func (p *prng) float64() float64 { return float64(p.uint64()>>11) / (1 << 53) }

// intn returns a uniform value in [0, n] (inclusive, as torch.randint(0, n+1)).
func (p *prng) intn(n int) int {
	if n <= 0 {
		return 0
	}
	return int(p.uint64() % uint64(n+1))
}

// planField is one compiled field pipeline.
type planField struct {
	field int
	name  string
	out   Output
	st    stage
}

// Plan is a compiled plan on an opened file. It is safe for concurrent Runs.
type Plan struct {
	l      *Loader
	seed   uint64
	fields []planField
}

// Outputs returns the plan's outputs, one per field, in plan order.
func (p *Plan) Outputs() []Output {
	out := make([]Output, len(p.fields))
	for k, f := range p.fields {
		out[k] = f.out
		out[k].Shape = append([]int{}, f.out.Shape...)
	}
	return out
}

// NewPlan compiles spec for the loader's file.
func (l *Loader) NewPlan(spec PlanSpec) (*Plan, error) {
	p := &Plan{l: l, seed: spec.Seed}
	if len(spec.Fields) == 0 {
		return nil, fmt.Errorf("%w: no fields", ErrPlan)
	}
	seen := map[string]bool{}
	for _, fs := range spec.Fields {
		f := l.src.fieldIndex(fs.Field)
		if f < 0 {
			return nil, fmt.Errorf("%w: field %s is not in %s (fields: %s)", ErrPlan, quote.Q(fs.Field), l.src.name, l.src.fieldNames())
		}
		if seen[fs.Field] {
			return nil, fmt.Errorf("%w: field %s appears twice", ErrPlan, quote.Q(fs.Field))
		}
		seen[fs.Field] = true
		pf, err := compileField(&l.src.fields[f], fs.Ops)
		if err != nil {
			return nil, fmt.Errorf("%w: field %s: %w", ErrPlan, quote.Q(fs.Field), err)
		}
		pf.field, pf.name, pf.out.Name = f, fs.Field, fs.Field
		p.fields = append(p.fields, pf)
	}
	return p, nil
}

func (s *source) fieldIndex(name string) int {
	for k := range s.fields {
		if s.fields[k].Name == name {
			return k
		}
	}
	return -1
}

func (s *source) fieldNames() string {
	var b strings.Builder
	for k, f := range s.fields {
		if k > 0 {
			b.WriteString(", ")
		}
		if k == 16 {
			fmt.Fprintf(&b, "… %d more", len(s.fields)-k)
			break
		}
		b.WriteString(quote.Q(f.Name))
	}
	return b.String()
}

// compileField compiles the ops of one field.
func compileField(fi *fieldInfo, raw []json.RawMessage) (planField, error) {
	if len(raw) == 0 {
		return planField{}, errors.New("no ops")
	}
	ops := make([]*opSpec, len(raw))
	for k, r := range raw {
		o, err := parseOp(r)
		if err != nil {
			return planField{}, fmt.Errorf("op %d: %w", k, err)
		}
		ops[k] = o
	}
	first := ops[0]
	wrap := func(err error) error { return fmt.Errorf("op %d %s: %w", 0, first.Op, err) }
	only := func(kinds ...kind) error {
		for _, k := range kinds {
			if fi.Kind == k {
				return nil
			}
		}
		return wrap(fmt.Errorf("does not decode a %s field", fi.TypeName))
	}
	single := func() error {
		if len(ops) > 1 {
			return fmt.Errorf("op 1 %s: %s takes no further ops", ops[1].Op, first.Op)
		}
		return nil
	}
	var pf planField
	switch first.Op {
	case "Int", "Float":
		want, dt := kindInt, "int64"
		if first.Op == "Float" {
			want, dt = kindFloat, "float64"
		}
		if err := only(want); err != nil {
			return pf, err
		}
		if err := first.allow(); err != nil {
			return pf, wrap(err)
		}
		pf.out = Output{DType: dt, Shape: []int{}, Kind: first.Op, itemSize: 8}
		pf.st = scalarStage{float: want == kindFloat}
		return pf, single()
	case "Bytes", "Text", "JSON":
		var err error
		switch first.Op {
		case "Bytes":
			if !fi.Payload {
				err = only(kindBytes)
			}
		case "Text":
			err = only(kindText)
		case "JSON":
			err = only(kindJSON)
		}
		if err != nil {
			return pf, err
		}
		if err := first.allow(); err != nil {
			return pf, wrap(err)
		}
		pf.out = Output{DType: "uint8", Shape: []int{}, Variable: true, Kind: first.Op}
		if first.Op == "Text" && fi.TokenWidth > 0 {
			// token ids: little-endian unsigned integers of TokenWidth bytes
			pf.out.Kind = fmt.Sprintf("Tokens%d", 8*fi.TokenWidth)
		}
		pf.st = bytesStage{}
		return pf, single()
	case "NDArray":
		if err := only(kindNDArray); err != nil {
			return pf, err
		}
		st, out, err := compileNDArray(fi, first)
		if err != nil {
			return pf, wrap(err)
		}
		pf.out, pf.st = out, st
		return pf, single()
	case "RandomResizedCrop", "CenterCrop", "Resize":
		if err := only(kindImage); err != nil {
			return pf, err
		}
		st, out, err := compileImage(fi, ops)
		if err != nil {
			return pf, err
		}
		pf.out, pf.st = out, st
		return pf, nil
	case "Audio":
		if err := only(kindAudioPCM, kindAudioFLAC); err != nil {
			return pf, err
		}
		st, out, err := compileAudio(fi, first)
		if err != nil {
			return pf, wrap(err)
		}
		pf.out, pf.st = out, st
		return pf, single()
	case "RandomHorizontalFlip", "Flip", "Normalize", "ToCHW":
		return pf, wrap(errors.New("is a transform: the field's first op must be a decoder (RandomResizedCrop, CenterCrop, Resize)"))
	}
	return pf, wrap(errors.New("unknown op (decoders: Int, Float, Bytes, Text, JSON, NDArray, RandomResizedCrop, CenterCrop, Resize, Audio)"))
}

// scalarStage writes an INT or FLOAT value as 8 little-endian bytes.
type scalarStage struct{ float bool }

func (s scalarStage) decode(_ *worker, _ runCtx, v value, dst []byte) error {
	if s.float {
		putF64(dst, v.Float)
	} else {
		putI64(dst, v.Int)
	}
	return nil
}

// bytesStage copies the payload.
type bytesStage struct{}

func (bytesStage) decode(_ *worker, _ runCtx, v value, dst []byte) error {
	copy(dst, v.Payload)
	return nil
}

// ndarrayStage copies a fixed-layout array, or the data of a .npy payload of the plan's dtype
// and shape.
type ndarrayStage struct {
	npy   bool
	descr string
	shape []int
	size  int
}

var errMissing = errors.New("missing value (empty payload) in a fixed-size output")

func compileNDArray(fi *fieldInfo, o *opSpec) (stage, Output, error) {
	if err := o.allow("dtype", "shape"); err != nil {
		return nil, Output{}, err
	}
	st := ndarrayStage{}
	switch {
	case fi.Recorded && fi.Layout == 0:
		st.descr, st.shape = fi.DType, fi.Shape
		if o.has("dtype") && o.DType != fi.DType || o.has("shape") && !equalInts(o.Shape, fi.Shape) {
			return nil, Output{}, fmt.Errorf("dtype %s shape %v differ from the field's %s %v", quote.Q(o.DType), o.Shape, fi.DType, fi.Shape)
		}
	default:
		if !o.has("dtype") || !o.has("shape") {
			return nil, Output{}, errors.New("the field's arrays are .npy payloads whose shapes may differ: give dtype and shape")
		}
		st.npy, st.descr, st.shape = true, o.DType, o.Shape
	}
	item, err := dtypeSize(st.descr)
	if err != nil {
		return nil, Output{}, err
	}
	size := int64(item)
	for _, d := range st.shape {
		if d < 0 || int64(d) > 1<<31 {
			return nil, Output{}, fmt.Errorf("shape %v", st.shape)
		}
		size *= int64(d)
		if size > 1<<32 || size > math.MaxInt {
			return nil, Output{}, fmt.Errorf("shape %v is too large", st.shape)
		}
	}
	st.size = int(size)
	return st, Output{DType: st.descr, Shape: append([]int{}, st.shape...), Kind: "NDArray", itemSize: st.size}, nil
}

func (s ndarrayStage) decode(_ *worker, _ runCtx, v value, dst []byte) error {
	if len(v.Payload) == 0 {
		return errMissing
	}
	if !s.npy {
		if len(v.Payload) != s.size {
			return fmt.Errorf("array payload of %d bytes, want %d", len(v.Payload), s.size)
		}
		copy(dst, v.Payload)
		return nil
	}
	descr, shape, data, err := parseNPY(v.Payload)
	if err != nil {
		return err
	}
	ok := descr == s.descr && len(shape) == len(s.shape)
	for k := 0; ok && k < len(shape); k++ {
		ok = shape[k] == uint64(s.shape[k])
	}
	if !ok || len(data) != s.size {
		return fmt.Errorf("array is %s %v, the plan says %s %v", quote.Q(descr), shape, s.descr, s.shape)
	}
	copy(dst, data)
	return nil
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}
