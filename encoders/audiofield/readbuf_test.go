package audiofield

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mldf/convert/internal/wav"
	"github.com/mldf/convert/sample"
)

// TestReadBufferReuse encodes files of every path through fields that reuse their read
// buffers (FLAC pass-through and WAV fast path keep the buffer as the payload; WAV → FLAC,
// FLAC → PCM and resampling hand it back), keeps every payload, and checks at the end that
// each still equals what a fresh field makes of its file alone: a buffer handed back while
// a payload still used it would show here as a payload overwritten by a later file.
func TestReadBufferReuse(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i := range 6 {
		src := testSignal(3000+997*i, 16)
		for j := range src {
			src[j] = src[j]/2 + int32(i*31) // different contents in every file
		}
		w, err := wav.Encode(wav.Format{SampleRate: 16000, Channels: 1, Source: wav.PCM, ValidBits: 16}, src, nil)
		if err != nil {
			t.Fatal(err)
		}
		fl, err := EncodeFLAC(src, 1, 16, 16000)
		if err != nil {
			t.Fatal(err)
		}
		for ext, b := range map[string][]byte{".wav": w, ".flac": fl} {
			p := filepath.Join(dir, string(rune('a'+i))+ext)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, p)
		}
	}
	missing := filepath.Join(dir, "missing.wav")
	fields := map[string]func() *Field{
		"flac":        func() *Field { return mustField(NewCompressed("a", Options{})) },
		"int16":       func() *Field { return mustField(NewWaveform("a", Options{})) },
		"float32 8k":  func() *Field { return mustField(NewWaveform("a", Options{Format: Float32, SampleRate: 8000})) },
		"flac 24-bit": func() *Field { return mustField(NewCompressed("a", Options{BitDepth: 24})) },
	}
	for name, newField := range fields {
		f := newField()
		var pays [][]byte
		kept := false
		for round := range 3 {
			for _, p := range files {
				pay, _, err := encode(f, sample.Value{Kind: sample.KindFile, Path: p})
				if err != nil {
					t.Fatalf("%s: %s: %v", name, p, err)
				}
				pays = append(pays, pay)
				kept = kept || len(f.readBufs) > 0
				if round == 0 && p == files[0] {
					if _, _, err := encode(f, sample.Value{Kind: sample.KindFile, Path: missing}); err == nil {
						t.Fatalf("%s: a missing file encoded", name)
					}
				}
			}
		}
		if !kept {
			t.Errorf("%s: no read buffer kept for reuse", name)
		}
		for i, pay := range pays {
			p := files[i%len(files)]
			want, _, err := encode(newField(), sample.Value{Kind: sample.KindFile, Path: p})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(pay, want) {
				t.Fatalf("%s: payload %d (%s) changed after later files were read", name, i, filepath.Base(p))
			}
		}
	}
	// Concurrent use of one field's buffers (run with -race).
	f := fields["flac 24-bit"]()
	want := make([][]byte, len(files))
	for i, p := range files {
		var err error
		if want[i], _, err = encode(fields["flac 24-bit"](), sample.Value{Kind: sample.KindFile, Path: p}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 20 {
				i := (g + r) % len(files)
				pay, _, err := encode(f, sample.Value{Kind: sample.KindFile, Path: files[i]})
				if err != nil || !bytes.Equal(pay, want[i]) {
					t.Errorf("concurrent %s: %v", files[i], err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestOverlaps checks the aliasing test that decides whether a read buffer may be reused.
func TestOverlaps(t *testing.T) {
	buf := make([]byte, 10, 16)
	other := make([]byte, 4)
	for _, c := range []struct {
		name string
		p    []byte
		want bool
	}{
		{"same", buf, true},
		{"head", buf[:1], true},
		{"tail inside len", buf[9:], true},
		{"beyond len, inside cap", buf[12:14], true},
		{"empty at the end of cap", buf[16:16], false},
		{"other", other, false},
		{"nil", nil, false},
	} {
		if got := overlaps(c.p, buf); got != c.want {
			t.Errorf("%s: overlaps %v, want %v", c.name, got, c.want)
		}
	}
}
