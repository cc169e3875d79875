package beton

import (
	"fmt"

	"github.com/mldf/convert/format/mldf"
)

// FromManifest translates the MLDF descriptor of one of our fields into FFCV's: INT → Int,
// FLOAT → Float, IMAGE_JPEG (jpeg and smart modes) and IMAGE_RAW → RGBImage, BYTES → Bytes,
// JSON → JSON, fixed-shape NDARRAY → NDArray. Anything else (PNG images, images that are not
// 3-channel RGB, audio, text, variable-shape arrays, names over 16 bytes) is refused with a
// message naming the field and what to use instead.
func FromManifest(d mldf.FieldDesc) (Field, error) {
	f := Field{Name: d.Name}
	if err := ValidateName(d.Name); err != nil {
		return f, fmt.Errorf("field %q: %w: rename it (FFCV stores 16 bytes of ASCII)", d.Name, err)
	}
	a := d.Arguments
	switch d.Type {
	case mldf.TypeInt:
		f.Type = TypeInt
	case mldf.TypeFloat:
		f.Type = TypeFloat
	case mldf.TypeBytes:
		f.Type = TypeBytes
	case mldf.TypeJSON:
		f.Type = TypeJSON
	case mldf.TypeImageJPEG, mldf.TypeImageRaw:
		var ia mldf.ImageArgs
		if err := ia.Unmarshal(a); err != nil {
			return f, fmt.Errorf("field %q: %w", d.Name, err)
		}
		if ia.Mode == mldf.ImageArgPNG {
			return f, fmt.Errorf("%w: field %q: PNG images; use mode jpeg, smart or raw", ErrUnsupported, d.Name)
		}
		if ia.Channels != 3 {
			return f, fmt.Errorf("%w: field %q: %d-channel images; FFCV's RGBImageField holds 3-channel RGB (set channels: 3)",
				ErrUnsupported, d.Name, ia.Channels)
		}
		f.Type = TypeRGBImage
	case mldf.TypeImagePNG:
		return f, fmt.Errorf("%w: field %q: PNG images; use mode jpeg, smart or raw", ErrUnsupported, d.Name)
	case mldf.TypeNDArray:
		var na mldf.NDArrayArgs
		if err := na.Unmarshal(a); err != nil || na.Layout != mldf.NDArrayFixed || len(na.Shape) == 0 {
			return f, fmt.Errorf("%w: field %q: an ndarray without a fixed dtype and shape; give both, or map it to bytes", ErrUnsupported, d.Name)
		}
		f.Type = TypeNDArray
		f.DType, f.Shape = na.DType, na.Shape
	default:
		return f, fmt.Errorf("%w: field %q is %s; map it to bytes or json instead", ErrUnsupported, d.Name, d.Type)
	}
	if err := f.check(); err != nil {
		return f, fmt.Errorf("field %q: %w", d.Name, err)
	}
	return f, nil
}
