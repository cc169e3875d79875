// Package encoders turns sample values into the MLDF per-sample metadata struct plus payload
// bytes, one Field type per kind of column. Fields carry their configuration and record it in
// the 128-byte descriptor arguments so a reader can rebuild them.
package encoders

import (
	"errors"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
)

// ErrFiltered marks a sample that a field's own options leave out (an audio clip longer than
// max_duration with on_long: skip). The pipeline records it but never counts it as an error:
// it does not fail a run under on_error: fail and does not use up max_errors.
var ErrFiltered = errors.New("left out by the field's options")

// Field encodes one column of every sample. A Field is configured once and must be safe for
// concurrent use by many workers.
type Field interface {
	// Name is the field name written in the descriptor (1..63 bytes of UTF-8).
	Name() string
	// Type is the field's type id.
	Type() mldf.TypeID
	// Arguments is the field's configuration as stored in its descriptor.
	Arguments() [mldf.ArgumentsSize]byte
	// Encode encodes v. meta is the field's zeroed metadata struct (manifest.MetaSize bytes);
	// Encode fills every member except the payload reference (data_ptr, data_size), which the
	// page writer sets. It returns the payload, or nil for none. The caller only reads the
	// returned slice, which may alias v.Bytes (read-only once emitted, see sample.Value): a
	// field that stores a value's bytes as they are need not copy them.
	Encode(v sample.Value, meta []byte) (payload []byte, err error)
}

// InC is implemented by a Field whose Encode spends most of its time in C code (cgo calls;
// the image field's libjpeg-turbo decoder, resampler and encoder). Such calls are long for
// the Go scheduler: when every processor (P) is held by a goroutine inside C, the runtime takes
// the P away from one and wakes a thread to spin on it, for every call. A program whose
// workers encode such fields runs them with spare Ps (cmd/convert gives it two more than its
// workers), which avoids that hand-off.
type InC interface {
	// InC reports whether Encode's time is mostly spent in C.
	InC() bool
}

// Descriptor returns f's field descriptor, with the class names of a ClassLabel (which the
// writer stores in the file).
func Descriptor(f Field) mldf.FieldDesc {
	size, _ := mldf.MetaSize(f.Type())
	d := mldf.FieldDesc{Name: f.Name(), Type: f.Type(), MetadataSize: uint32(size), Arguments: f.Arguments()}
	if c, ok := f.(*ClassLabel); ok {
		d.ClassNames = c.Names()
	}
	return d
}
