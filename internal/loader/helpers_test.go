package loader

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/format/mldf"
)

// tval is one test field value: Int/Float for scalars, Payload (and the metadata) otherwise.
type tval struct {
	Int     int64
	Float   float64
	Payload []byte
	Img     mldf.ImageMeta
	Aud     mldf.AudioMeta
	Txt     mldf.TextMeta
}

// writeMLDF writes n samples made by gen with the project's writer and returns the path.
func writeMLDF(t testing.TB, dir string, page int64, fields []mldf.FieldDesc, n int, gen func(i int) []tval) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("t%d.mldf", len(fields)*1000003+n))
	types := make([]mldf.TypeID, len(fields))
	for k, f := range fields {
		types[k] = f.Type
	}
	lay, err := mldf.Layout(types)
	if err != nil {
		t.Fatal(err)
	}
	w, err := mldf.Create(path, mldf.Options{PageSize: page, Fields: fields, Checksums: true})
	if err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < n; lo += 64 {
		b := w.NewBatch()
		for i := lo; i < min(lo+64, n); i++ {
			row := make([]byte, w.RowSize())
			vals := gen(i)
			payloads := make([][]byte, len(fields))
			for k, v := range vals {
				m := row[lay.Offsets[k]:]
				switch typ := fields[k].Type; {
				case typ == mldf.TypeInt:
					mldf.PutInt(m, v.Int)
				case typ == mldf.TypeFloat:
					mldf.PutFloat(m, v.Float)
				default:
					if typ >= mldf.TypeImageRaw && typ <= mldf.TypeImagePNG {
						v.Img.Put(m)
					}
					if typ == mldf.TypeAudioWaveform || typ == mldf.TypeAudioCompressed {
						v.Aud.Put(m)
					}
					if typ >= mldf.TypeTextRaw && typ <= mldf.TypeTextHierarchical {
						v.Txt.Put(m)
					}
					payloads[k] = v.Payload
				}
			}
			if err := b.Append(row, payloads); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Commit(context.Background(), w.Issue(), b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	return path
}

// ndarrayArgs returns fixed-layout NDARRAY arguments.
func ndarrayArgs(descr string, shape ...uint64) [mldf.ArgumentsSize]byte {
	var a [mldf.ArgumentsSize]byte
	a[0], a[1] = 1, 0
	copy(a[2:18], descr)
	a[18] = byte(len(shape))
	for k, d := range shape {
		binary.LittleEndian.PutUint64(a[24+8*k:], d)
	}
	return a
}

// scalarFile writes a file of n samples: label INT i*3, x FLOAT i/2, data BYTES ("s<i>",
// empty for every 7th), meta JSON, arr NDARRAY <f4 [2,3], text TEXT_RAW.
func scalarFile(t testing.TB, n int) string {
	t.Helper()
	fields := []mldf.FieldDesc{
		{Name: "label", Type: mldf.TypeInt},
		{Name: "x", Type: mldf.TypeFloat},
		{Name: "data", Type: mldf.TypeBytes},
		{Name: "meta", Type: mldf.TypeJSON},
		{Name: "arr", Type: mldf.TypeNDArray, Arguments: ndarrayArgs("<f4", 2, 3)},
		{Name: "text", Type: mldf.TypeTextRaw},
	}
	return writeMLDF(t, t.TempDir(), 4096, fields, n, func(i int) []tval {
		data := []byte(fmt.Sprintf("s%d", i))
		if i%7 == 3 {
			data = nil
		}
		arr := make([]byte, 24)
		for k := range 6 {
			binary.LittleEndian.PutUint32(arr[4*k:], uint32(i*10+k))
		}
		return []tval{{Int: int64(i * 3)}, {Float: float64(i) / 2}, {Payload: data},
			{Payload: []byte(fmt.Sprintf(`{"i":%d}`, i))}, {Payload: arr}, {Payload: []byte(fmt.Sprintf("text %d é", i))}}
	})
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
