package encoders

import (
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
)

// The field types of this package: scalars, bytes, JSON, arrays, and class labels (an int
// field given names).
func init() {
	Register(FieldSpec{Type: "int", Keys: []string{"names"}, Read: kind(sample.KindInt),
		New: func(name string, o *Options) (Field, error) {
			if names := o.Strings("names"); len(names) > 0 {
				return NewClassLabel(name, names)
			}
			return NewInt(name)
		}})
	Register(FieldSpec{Type: "float", Read: kind(sample.KindFloat),
		New: func(name string, _ *Options) (Field, error) { return NewFloat(name) }})
	Register(FieldSpec{Type: "bytes", Keys: []string{"base64"},
		Read: func(o *Options) sample.Kind {
			if o.Bool("base64") {
				return sample.KindBytes
			}
			return sample.KindString
		},
		New: func(name string, _ *Options) (Field, error) { return NewBytes(name) }})
	Register(FieldSpec{Type: "json", Read: kind(sample.KindJSON),
		New: func(name string, _ *Options) (Field, error) { return NewJSON(name) }})
	Register(FieldSpec{Type: "ndarray", Keys: []string{"dtype", "shape"}, Read: kind(sample.KindJSON),
		Check: func(name string, o *Options, c *Checker) {
			dtype, shape := o.String("dtype"), o.Uints("shape")
			if len(shape) > 0 && dtype == "" {
				c.Add("shape", "%s: shape needs a dtype", c.Where)
			} else if dtype != "" && mldf.ValidateName(name) == nil {
				// The encoder's own checks: a known dtype, at most 8 dimensions, at most 4 GiB.
				if _, err := NewNDArray(name, dtype, shape); err != nil {
					key := "shape"
					if !o.Given(key) {
						key = "dtype"
					}
					c.Add(key, "%v", err)
				}
			}
		},
		New: func(name string, o *Options) (Field, error) {
			return NewNDArray(name, o.String("dtype"), o.Uints("shape"))
		}})
}

// kind returns a FieldSpec.Read that reads every value as k.
func kind(k sample.Kind) func(*Options) sample.Kind {
	return func(*Options) sample.Kind { return k }
}
