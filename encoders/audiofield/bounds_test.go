package audiofield

import (
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/mldf/convert/internal/resample"
	"github.com/mldf/convert/internal/wav"
	"github.com/mldf/convert/sample"
)

func TestSampleRateBoundsAgree(t *testing.T) {
	if MaxSampleRate != resample.MaxRate || wav.MaxSampleRate != resample.MaxRate {
		t.Fatalf("bounds differ: field %d, wav %d, resample %d", MaxSampleRate, wav.MaxSampleRate, resample.MaxRate)
	}
}

// wavAt is a short 16-bit mono WAV whose header declares rate Hz.
func wavAt(t *testing.T, rate uint32) []byte {
	b, err := wav.Encode(wav.Format{SampleRate: 8000, Channels: 1, Source: wav.PCM, ValidBits: 16}, testSignal(4000, 16), nil)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b[24:], rate)
	return b
}

// TestHugeDeclaredRate: a WAV declaring 16,777,213 Hz resampled to 16 kHz
// built a 1.7 GB filter table. Declared rates at, just over and far over the bound, in WAV and
// FLAC, through a resampling field: over the bound is a per-file error naming the file, and
// no clip allocates more than a few MiB.
func TestHugeDeclaredRate(t *testing.T) {
	f := mustField(NewWaveform("a", Options{SampleRate: 16000}))
	flacAt := func(rate int) []byte {
		b, err := EncodeFLAC(testSignal(4000, 16), 1, 16, rate)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		data []byte
		err  error
	}{
		{"wav at the bound", wavAt(t, MaxSampleRate), nil},
		{"wav just over", wavAt(t, MaxSampleRate+1), wav.ErrFormat},
		{"wav 16777213 Hz", wavAt(t, 16777213), wav.ErrFormat},
		{"wav 4294967295 Hz", wavAt(t, 1<<32-1), wav.ErrFormat},
		{"flac at the bound", flacAt(MaxSampleRate), nil},
		{"flac just over", flacAt(MaxSampleRate + 1), ErrUnsupported},
		{"flac far over", flacAt(1<<20 - 1), ErrUnsupported},
	} {
		var ms0, ms1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		_, m, err := encode(f, sample.Value{Kind: sample.KindBytes, Bytes: tc.data, Name: "clip.wav"})
		runtime.ReadMemStats(&ms1)
		if alloc := ms1.TotalAlloc - ms0.TotalAlloc; alloc > 16<<20 {
			t.Errorf("%s: allocated %d MiB", tc.name, alloc>>20)
		}
		if tc.err == nil {
			if err != nil || m.SampleRate != 16000 {
				t.Errorf("%s: %v, meta %+v", tc.name, err, m)
			}
			continue
		}
		if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), "clip.wav") {
			t.Errorf("%s: %v, want %v naming the file", tc.name, err, tc.err)
		}
	}
	if _, err := NewWaveform("a", Options{SampleRate: MaxSampleRate + 1}); err == nil {
		t.Error("target rate over the bound accepted")
	}
	if _, err := NewWaveform("a", Options{SampleRate: MaxSampleRate}); err != nil {
		t.Error(err)
	}
}

// TestResamplerCacheBytes: the per-field cache of filter tables is bounded by bytes, however
// many rates a dataset declares; uncached pairs still resample.
func TestResamplerCacheBytes(t *testing.T) {
	f := mustField(NewWaveform("a", Options{SampleRate: 3001}))
	for i := 0; i < 12; i++ {
		rate := uint32(MaxSampleRate - 7*i) // ~4 MiB tables, all different
		_, m, err := encode(f, sample.Value{Kind: sample.KindBytes, Bytes: wavAt(t, rate), Name: "c.wav"})
		if err != nil || m.SampleRate != 3001 {
			t.Fatalf("rate %d: %v %+v", rate, err, m)
		}
	}
	if f.cached > maxCacheBytes || len(f.resamplers) == 0 || len(f.resamplers) >= 12 {
		t.Fatalf("cache: %d tables, %d bytes (bound %d)", len(f.resamplers), f.cached, maxCacheBytes)
	}
	t.Logf("cache holds %d tables, %.1f MiB", len(f.resamplers), float64(f.cached)/(1<<20))
}
