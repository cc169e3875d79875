package audiofield

import (
	"math"
	"testing"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/wav"
	"github.com/mldf/convert/sample"
)

// musicLike returns seconds of audio at rate: a few tones with a slow envelope plus noise,
// so that FLAC has realistic work to do.
func musicLike(rate, channels int, seconds float64) []int32 {
	n := int(float64(rate) * seconds)
	s := make([]int32, n*channels)
	x := uint32(1)
	for i := 0; i < n; i++ {
		tt := float64(i) / float64(rate)
		env := 0.5 + 0.5*math.Sin(2*math.Pi*0.7*tt)
		for c := 0; c < channels; c++ {
			x = x*1664525 + 1013904223
			v := env*(6000*math.Sin(2*math.Pi*220*tt+float64(c))+3000*math.Sin(2*math.Pi*661*tt)+1500*math.Sin(2*math.Pi*1503*tt)) +
				float64(int32(x>>16)&0x1ff) - 256
			s[i*channels+c] = int32(v)
		}
	}
	return s
}

func benchField(b *testing.B, f *Field, data []byte, audioSeconds float64) {
	meta := make([]byte, mldf.AudioMetaSize)
	v := sample.Value{Kind: sample.KindBytes, Bytes: data, Name: "bench"}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.Encode(v, meta); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(audioSeconds*float64(b.N)/b.Elapsed().Seconds()*60/3600, "audio-h/min")
}

func wavBytes(b *testing.B, rate, ch int, sec float64) []byte {
	w, err := wav.Encode(wav.Format{SampleRate: rate, Channels: ch, Source: wav.PCM, ValidBits: 16}, musicLike(rate, ch, sec), nil)
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// BenchmarkWAVToPCM: 16 kHz mono 16-bit WAV to an int16 waveform (decode + copy).
func BenchmarkWAVToPCM(b *testing.B) {
	benchField(b, mustField(NewWaveform("a", Options{})), wavBytes(b, 16000, 1, 60), 60)
}

// BenchmarkWAV48kTo16k: 48 kHz mono WAV resampled to a 16 kHz int16 waveform.
func BenchmarkWAV48kTo16k(b *testing.B) {
	benchField(b, mustField(NewWaveform("a", Options{SampleRate: 16000})), wavBytes(b, 48000, 1, 20), 20)
}

// BenchmarkFLACDecode: decode + MD5 check of 44.1 kHz stereo 16-bit FLAC.
func BenchmarkFLACDecode(b *testing.B) {
	data, err := EncodeFLAC(musicLike(44100, 2, 20), 2, 16, 44100)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := DecodeFLAC(data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(20*44100*2*float64(b.N)/b.Elapsed().Seconds()/1e6, "Msamples/s")
	b.ReportMetric(20*float64(b.N)/b.Elapsed().Seconds()*60/3600, "audio-h/min")
}

// BenchmarkFLACPassthrough: a FLAC input stored as its bytes (decode + MD5 verify only).
func BenchmarkFLACPassthrough(b *testing.B) {
	data, _ := EncodeFLAC(musicLike(16000, 1, 60), 1, 16, 16000)
	benchField(b, mustField(NewCompressed("a", Options{})), data, 60)
}

// BenchmarkWAVToFLAC: 16 kHz mono WAV encoded to FLAC by internal/flacenc.
func BenchmarkWAVToFLAC(b *testing.B) {
	benchField(b, mustField(NewCompressed("a", Options{})), wavBytes(b, 16000, 1, 60), 60)
}
