package loader

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/mldf/convert/format/mldf"
)

func openT(t testing.TB, path string, opt Options) *Loader {
	t.Helper()
	l, err := Open(context.Background(), path, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func planT(t testing.TB, l *Loader, js string) *Plan {
	t.Helper()
	var spec PlanSpec
	if err := json.Unmarshal([]byte(js), &spec); err != nil {
		t.Fatal(err)
	}
	p, err := l.NewPlan(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runT allocates the buffers of a batch and runs it.
func runT(t testing.TB, p *Plan, idx []int64, epoch int64) ([]Buffer, error) {
	t.Helper()
	sizes, err := p.BatchBytes(idx)
	if err != nil {
		return nil, err
	}
	outs := p.Outputs()
	bufs := make([]Buffer, len(outs))
	for k, o := range outs {
		bufs[k].Data = make([]byte, sizes[k])
		if o.Variable {
			bufs[k].Offsets = make([]int64, len(idx)+1)
		}
	}
	return bufs, p.Run(context.Background(), idx, epoch, bufs)
}

const scalarPlan = `{"seed":1,"fields":[{"field":"label","ops":[{"op":"Int"}]},{"field":"x","ops":[{"op":"Float"}]},
	{"field":"data","ops":[{"op":"Bytes"}]},{"field":"meta","ops":[{"op":"JSON"}]},
	{"field":"arr","ops":[{"op":"NDArray"}]},{"field":"text","ops":[{"op":"Text"}]}]}`

func TestRunScalarsMatchReader(t *testing.T) {
	path := scalarFile(t, 300)
	for _, threads := range []int{1, 4} {
		l := openT(t, path, Options{Threads: threads, VerifyChecksums: true})
		p := planT(t, l, scalarPlan)
		outs := p.Outputs()
		wantOut := []struct {
			dtype string
			shape []int
			v     bool
		}{{"int64", nil, false}, {"float64", nil, false}, {"uint8", nil, true}, {"uint8", nil, true}, {"<f4", []int{2, 3}, false}, {"uint8", nil, true}}
		for k, w := range wantOut {
			if outs[k].DType != w.dtype || outs[k].Variable != w.v || len(outs[k].Shape) != len(w.shape) {
				t.Fatalf("output %d = %+v, want %+v", k, outs[k], w)
			}
		}
		o, _ := l.Order(OrderSpec{Mode: OrderRandom, Seed: 5})
		idx := make([]int64, 100)
		o.Fill(0, idx)
		bufs, err := runT(t, p, idx, 0)
		if err != nil {
			t.Fatal(err)
		}
		r, err := mldf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for j, i := range idx {
			ii := int(i)
			lab, _ := r.Int(ii, 0)
			if got := int64(binary.LittleEndian.Uint64(bufs[0].Data[8*j:])); got != lab {
				t.Fatalf("sample %d label %d, want %d", i, got, lab)
			}
			x, _ := r.Float(ii, 1)
			if got := math.Float64frombits(binary.LittleEndian.Uint64(bufs[1].Data[8*j:])); got != x {
				t.Fatalf("sample %d x %v, want %v", i, got, x)
			}
			for _, f := range []int{2, 3, 5} {
				want, _ := r.Payload(ii, f)
				b := bufs[f]
				if got := b.Data[b.Offsets[j]:b.Offsets[j+1]]; !bytes.Equal(got, want) {
					t.Fatalf("sample %d field %d: %q, want %q", i, f, got, want)
				}
			}
			want, _ := r.Payload(ii, 4)
			if got := bufs[4].Data[24*j : 24*j+24]; !bytes.Equal(got, want) {
				t.Fatalf("sample %d arr differs", i)
			}
		}
	}
}

func TestPlanErrors(t *testing.T) {
	l := openT(t, scalarFile(t, 10), Options{})
	cases := []struct{ plan, want string }{
		{`{"fields":[]}`, "no fields"},
		{`{"fields":[{"field":"nope","ops":[{"op":"Int"}]}]}`, `field "nope" is not in`},
		{`{"fields":[{"field":"label","ops":[]}]}`, "no ops"},
		{`{"fields":[{"field":"label","ops":[{"op":"Float"}]}]}`, "op 0 Float: does not decode a INT field"},
		{`{"fields":[{"field":"label","ops":[{"op":"Frobnicate"}]}]}`, "unknown op"},
		{`{"fields":[{"field":"label","ops":[{"op":"Int","size":3}]}]}`, `unknown parameter "size"`},
		{`{"fields":[{"field":"label","ops":[{"op":"Int","sizee":3}]}]}`, `unknown field "sizee"`},
		{`{"fields":[{"field":"label","ops":[{"op":"Int"},{"op":"ToCHW"}]}]}`, "takes no further ops"},
		{`{"fields":[{"field":"label","ops":[{"op":"Int"}]},{"field":"label","ops":[{"op":"Int"}]}]}`, "appears twice"},
		{`{"fields":[{"field":"data","ops":[{"op":"RandomResizedCrop","size":224}]}]}`, "does not decode a BYTES field"},
		{`{"fields":[{"field":"label","ops":[{"op":"Normalize"}]}]}`, "is a transform"},
		{`{"fields":[{"field":"arr","ops":[{"op":"NDArray","dtype":"<f8"}]}]}`, "differ from the field's"},
		{`{"fields":[{"field":"text","ops":[{"op":"JSON"}]}]}`, "does not decode a TEXT_RAW field"},
		{`{"fields":[{"field":"label","ops":[{"noop":1}]}]}`, "unknown field"},
	}
	for _, c := range cases {
		var spec PlanSpec
		if err := json.Unmarshal([]byte(c.plan), &spec); err != nil {
			t.Fatal(err)
		}
		_, err := l.NewPlan(spec)
		if !errors.Is(err, ErrPlan) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want ErrPlan with %q", c.plan, err, c.want)
		}
	}
}

func TestRunErrors(t *testing.T) {
	path := scalarFile(t, 20)
	l := openT(t, path, Options{})
	p := planT(t, l, `{"fields":[{"field":"label","ops":[{"op":"Int"}]}]}`)
	if _, err := runT(t, p, []int64{0, 20}, 0); !errors.Is(err, ErrIndex) || !strings.Contains(err.Error(), path) {
		t.Errorf("index 20: %v", err)
	}
	if err := p.Run(context.Background(), []int64{0, 1}, 0, []Buffer{{Data: make([]byte, 15)}}); !errors.Is(err, ErrBuffer) {
		t.Errorf("short buffer: %v", err)
	}
	if err := p.Run(context.Background(), []int64{0}, 0, nil); !errors.Is(err, ErrBuffer) {
		t.Errorf("no buffer: %v", err)
	}
	l.Close()
	if err := p.Run(context.Background(), []int64{0}, 0, []Buffer{{Data: make([]byte, 8)}}); !errors.Is(err, ErrClosed) {
		t.Errorf("closed: %v", err)
	}
}

// TestCorruptPayload flips a payload byte: verify_checksums names the sample; without it the
// bytes come through (a BYTES payload has nothing to decode).
func TestCorruptPayload(t *testing.T) {
	path := scalarFile(t, 50)
	r, err := mldf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := r.Ref(18, 2)
	r.Close()
	b, _ := os.ReadFile(path)
	b[ref.Ptr] ^= 0xff
	os.WriteFile(path, b, 0o644)
	l := openT(t, path, Options{VerifyChecksums: true, Threads: 4})
	p := planT(t, l, `{"fields":[{"field":"data","ops":[{"op":"Bytes"}]}]}`)
	_, err = runT(t, p, []int64{1, 2, 18, 3}, 0)
	if !errors.Is(err, mldf.ErrChecksum) || !strings.Contains(err.Error(), "sample 18") || !strings.Contains(err.Error(), path) {
		t.Fatalf("err %v, want a checksum error naming sample 18 and the file", err)
	}
}

func TestDescribe(t *testing.T) {
	l := openT(t, scalarFile(t, 10), Options{})
	d := l.Describe()
	if d.NumSamples != 10 || len(d.Fields) != 6 || d.Fields[4].DType != "<f4" || len(d.Fields[4].Shape) != 2 || !d.Checksummed {
		t.Fatalf("%+v", d)
	}
	if _, err := json.Marshal(d); err != nil {
		t.Fatal(err)
	}
}

func TestTokens(t *testing.T) {
	var a [mldf.ArgumentsSize]byte
	a[0], a[1] = 1, 4
	path := writeMLDF(t, t.TempDir(), 4096, []mldf.FieldDesc{{Name: "ids", Type: mldf.TypeTextTokenized, Arguments: a}}, 5, func(i int) []tval {
		p := make([]byte, 4*(i+1))
		for k := range i + 1 {
			binary.LittleEndian.PutUint32(p[4*k:], uint32(1000*i+k))
		}
		return []tval{{Payload: p, Txt: mldf.TextMeta{NumTokens: uint16(i + 1), Encoding: 1}}}
	})
	l := openT(t, path, Options{})
	p := planT(t, l, `{"fields":[{"field":"ids","ops":[{"op":"Text"}]}]}`)
	if k := p.Outputs()[0].Kind; k != "Tokens32" {
		t.Fatalf("kind %q", k)
	}
	bufs, err := runT(t, p, []int64{4, 2}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if o := bufs[0].Offsets; o[1] != 20 || o[2] != 32 || binary.LittleEndian.Uint32(bufs[0].Data[20+8:]) != 2002 {
		t.Fatalf("offsets %v data %v", o, bufs[0].Data)
	}
}
