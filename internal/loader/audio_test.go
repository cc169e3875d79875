package loader

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/flacenc"
)

// audioFile writes n stereo int16 clips of 100+i*50 frames, sample value (f*2+c)*(i+1) mod
// 30000, as PCM (field "pcm", sample format int16) and FLAC ("flac").
func audioFile(t testing.TB, n int) string {
	t.Helper()
	var pcmArgs, flacArgs [mldf.ArgumentsSize]byte
	pcmArgs[0], pcmArgs[1] = 1, 1
	flacArgs[0], flacArgs[1] = 1, 4
	fields := []mldf.FieldDesc{{Name: "pcm", Type: mldf.TypeAudioWaveform, Arguments: pcmArgs}, {Name: "flac", Type: mldf.TypeAudioCompressed, Arguments: flacArgs}}
	return writeMLDF(t, t.TempDir(), 1<<16, fields, n, func(i int) []tval {
		frames := 100 + i*50
		s := make([]int32, frames*2)
		pcm := make([]byte, frames*4)
		for k := range s {
			s[k] = int32(k*(i+1)%30000 - 15000)
			binary.LittleEndian.PutUint16(pcm[2*k:], uint16(int16(s[k])))
		}
		fl, err := flacenc.Append(nil, s, flacenc.Info{SampleRate: 16000, Channels: 2, BitsPerSample: 16}, flacenc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		m := mldf.AudioMeta{NumSamples: uint32(frames), SampleRate: 16000, NumChannels: 2, BitDepth: 16}
		mf := m
		mf.Codec = 1
		return []tval{{Payload: pcm, Aud: m}, {Payload: fl, Aud: mf}}
	})
}

func TestAudio(t *testing.T) {
	path := audioFile(t, 6)
	l := openT(t, path, Options{Threads: 3})
	want := func(i, f, c int) int16 { return int16((f*2+c)*(i+1)%30000 - 15000) }
	cases := []struct {
		op      string
		check   func(i, k, c int) (int16, bool) // the expected value at frame k of channel c, or pad
		float   bool
		offsets bool
	}{
		{`{"op":"Audio","length":300,"channels":2,"dtype":"int16","pad":-7}`, func(i, k, c int) (int16, bool) {
			if k < 100+i*50 {
				return want(i, k, c), true
			}
			return -7, true
		}, false, false},
		{`{"op":"Audio","length":300,"channels":2,"offset":"center"}`, func(i, k, c int) (int16, bool) {
			frames := 100 + i*50
			if frames > 300 {
				return want(i, k+(frames-300)/2, c), true
			}
			at := (300 - frames) / 2
			if k < at || k >= at+frames {
				return 0, true
			}
			return want(i, k-at, c), true
		}, true, false},
		{`{"op":"Audio","length":120,"dtype":"int16"}`, func(i, k, c int) (int16, bool) {
			if k >= 100+i*50 {
				return 0, true
			}
			return int16(math.Round((float64(want(i, k, 0)) + float64(want(i, k, 1))) / 2)), true
		}, false, false},
	}
	idx := []int64{0, 5, 2, 4}
	for _, field := range []string{"pcm", "flac"} {
		for _, c := range cases {
			p := planT(t, l, `{"fields":[{"field":"`+field+`","ops":[`+c.op+`]}]}`)
			out := p.Outputs()[0]
			bufs, err := runT(t, p, idx, 0)
			if err != nil {
				t.Fatalf("%s %s: %v", field, c.op, err)
			}
			chn, length := out.Shape[0], out.Shape[1]
			for j, i := range idx {
				for ch := range chn {
					for k := range length {
						o := (j*chn+ch)*length + k
						w, _ := c.check(int(i), k, ch)
						var got float64
						if out.DType == "float32" {
							got = float64(math.Float32frombits(binary.LittleEndian.Uint32(bufs[0].Data[4*o:]))) * 32768
						} else {
							got = float64(int16(binary.LittleEndian.Uint16(bufs[0].Data[2*o:])))
						}
						if math.Abs(got-float64(w)) > 0.01 {
							t.Fatalf("%s %s: sample %d ch %d frame %d = %v, want %v", field, c.op, i, ch, k, got, w)
						}
					}
				}
			}
		}
	}
	// random offsets: deterministic, inside the clip, varying
	p := planT(t, l, `{"seed":4,"fields":[{"field":"flac","ops":[{"op":"Audio","length":50,"offset":"random","channels":2,"dtype":"int16"}]}]}`)
	a, _ := runT(t, p, idx, 1)
	b, _ := runT(t, p, idx, 1)
	c, _ := runT(t, p, idx, 2)
	if !bytes.Equal(a[0].Data, b[0].Data) || bytes.Equal(a[0].Data, c[0].Data) {
		t.Fatal("random offsets: not a function of (seed, epoch)")
	}
}

func TestAudioErrors(t *testing.T) {
	path := audioFile(t, 3)
	l := openT(t, path, Options{})
	for _, c := range []struct{ plan, want string }{
		{`{"op":"Audio"}`, "length: want"},
		{`{"op":"Audio","length":10,"offset":"end"}`, "want start, center or random"},
		{`{"op":"Audio","length":10,"dtype":"int8"}`, "want float32 or int16"},
		{`{"op":"Audio","length":10,"dtype":"int16","pad":1e6}`, "out of the dtype's range"},
		{`{"op":"Audio","length":10,"channels":9}`, "want 1..8"},
	} {
		var spec PlanSpec
		jsonUnmarshal(`{"fields":[{"field":"pcm","ops":[`+c.plan+`]}]}`, &spec)
		if _, err := l.NewPlan(spec); !errors.Is(err, ErrPlan) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.plan, err, c.want)
		}
	}
	p := planT(t, l, `{"fields":[{"field":"pcm","ops":[{"op":"Audio","length":10,"channels":3}]}]}`)
	if _, err := runT(t, p, []int64{1}, 0); !errors.Is(err, errAudio) || !strings.Contains(err.Error(), "sample 1") {
		t.Errorf("channels: %v", err)
	}
}
