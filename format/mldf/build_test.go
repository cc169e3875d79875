package mldf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sync/errgroup"
)

// tval is one field value of a test sample.
type tval struct {
	i       int64
	f       float64
	payload []byte
	img     ImageMeta
	aud     AudioMeta
	txt     TextMeta
}

// buildFile writes an MLDF file by the rules of docs/FORMAT.md §6.1, independently of the
// pagewriter, with the manifest encoders.
func buildFile(t testing.TB, pageSize uint32, descs []FieldDesc, samples [][]tval, checksummed bool) []byte {
	t.Helper()
	types := make([]TypeID, len(descs))
	for k := range descs {
		types[k] = descs[k].Type
		size, _ := MetaSize(descs[k].Type)
		descs[k].MetadataSize = uint32(size)
	}
	l, err := Layout(types)
	if err != nil {
		t.Fatal(err)
	}
	ps := uint64(pageSize)
	alignUp := func(x, a uint64) uint64 { return (x + a - 1) / a * a }
	dataPtr := alignUp(80+208*uint64(len(descs)), ps)
	cursor := dataPtr
	file := make([]byte, dataPtr)
	meta := make([]byte, len(samples)*l.Size)
	var entries []AllocEntry
	for i, s := range samples {
		row := meta[i*l.Size:]
		for f, v := range s {
			m := row[l.Offsets[f]:]
			switch typ := descs[f].Type; {
			case typ == TypeInt:
				PutInt(m, v.i)
				continue
			case typ == TypeFloat:
				PutFloat(m, v.f)
				continue
			case isImage(typ):
				v.img.Put(m)
			case isAudio(typ):
				v.aud.Put(m)
			case isText(typ):
				v.txt.Put(m)
			}
			n := uint64(len(v.payload))
			if n == 0 {
				continue
			}
			if (n <= ps && cursor%ps+n > ps) || (n > ps && cursor%ps != 0) {
				cursor = alignUp(cursor, ps)
			}
			PutRef(m, PayloadRef{Ptr: cursor, Size: uint32(n)})
			e := AllocEntry{Ptr: cursor, Size: uint32(n)}
			if checksummed {
				e.Check = PayloadChecksum(v.payload)
			}
			entries = append(entries, e)
			file = append(file, make([]byte, cursor+n-uint64(len(file)))...)
			copy(file[cursor:], v.payload)
			cursor = alignUp(cursor+n, 8)
		}
	}
	file = append(file, make([]byte, cursor-uint64(len(file)))...)
	h := Header{VersionMajor: 1, Flags: FlagLittleEndian, NumSamples: uint64(len(samples)),
		NumFields: uint16(len(descs)), PageSize: pageSize, FieldDescPtr: 80, DataPtr: dataPtr,
		MetadataPtr: cursor, AllocTablePtr: cursor + uint64(len(meta))}
	if checksummed {
		h.Flags |= FlagChecksummed
	}
	copy(file, Signature)
	for k := range descs {
		if err := descs[k].Put(file[80+208*k:]); err != nil {
			t.Fatal(err)
		}
	}
	file = append(file, meta...)
	for _, e := range entries {
		var b [16]byte
		e.Put(b[:])
		file = append(file, b[:]...)
	}
	h.Put(file[HeaderOffset:])
	if checksummed {
		h.Checksum = HeaderChecksum(file[HeaderOffset:], file[80:80+208*len(descs)],
			meta, file[h.AllocTablePtr:])
		h.Put(file[HeaderOffset:])
	}
	return file
}

var allKinds = []TypeID{TypeInt, TypeFloat, TypeBytes, TypeJSON,
	TypeImageJPEG, TypeImageRaw, TypeAudioCompressed, TypeAudioWaveform,
	TypeTextRaw, TypeTextTokenized}

// randomDataset returns fields of random kinds and samples with payloads from empty to
// several pages, with metadata that agrees with them (rules F1..F10).
func randomDataset(rng *rand.Rand, pageSize int) ([]FieldDesc, [][]tval) {
	nf := 1 + rng.IntN(5)
	descs := make([]FieldDesc, nf)
	for k := range descs {
		descs[k] = FieldDesc{Name: fmt.Sprintf("f%d", k), Type: allKinds[rng.IntN(len(allKinds))]}
		if t := descs[k].Type; t == TypeInt || t == TypeFloat || t == TypeBytes || t == TypeJSON {
			descs[k].Arguments[0] = byte(k) // no field rule reads these arguments
		}
	}
	samples := make([][]tval, rng.IntN(40))
	for i := range samples {
		s := make([]tval, nf)
		for f := range s {
			v := tval{i: rng.Int64() - math.MaxInt64/2, f: rng.NormFloat64(),
				img: ImageMeta{Height: uint16(1 + rng.IntN(1000)), Width: uint16(1 + rng.IntN(1000)), Channels: 3, Mode: 1},
				aud: AudioMeta{NumSamples: 1 + rng.Uint32()/2, SampleRate: 16000, NumChannels: 2, BitDepth: 16, Codec: 1},
				txt: TextMeta{NumTokens: uint16(rng.IntN(9999)), Encoding: 1}}
			var n int
			switch rng.IntN(6) {
			case 0: // empty
			case 1:
				n = 1 + rng.IntN(16)
			case 2:
				n = pageSize - rng.IntN(8)
			case 3:
				n = pageSize + 1 + rng.IntN(3*pageSize)
			default:
				n = 1 + rng.IntN(pageSize/2)
			}
			switch typ := descs[f].Type; {
			case n == 0:
			case typ == TypeImageRaw:
				v.img = ImageMeta{Height: uint16(1 + rng.IntN(64)), Width: uint16(1 + rng.IntN(64)), Channels: 3, Mode: 0}
				n = int(v.img.Height) * int(v.img.Width) * 3
			case typ == TypeAudioWaveform:
				n = (n + 1) / 2 * 2
				v.aud = AudioMeta{NumSamples: uint32(n / 2), SampleRate: 8000, NumChannels: 1, BitDepth: 16, Codec: 0}
			case typ == TypeTextRaw:
				v.txt = TextMeta{Encoding: 0}
			case typ == TypeTextTokenized:
				n = (n + 3) / 4 * 4
			}
			v.payload = make([]byte, n)
			for j := range v.payload {
				v.payload[j] = byte(rng.Uint32() | 1) // non-zero, so misplaced gaps show
			}
			s[f] = v
		}
		samples[i] = s
	}
	return descs, samples
}

// checkDataset checks every value of r against samples.
func checkDataset(t *testing.T, r *Reader, descs []FieldDesc, samples [][]tval) {
	t.Helper()
	if r.NumSamples() != len(samples) {
		t.Fatalf("NumSamples %d, want %d", r.NumSamples(), len(samples))
	}
	for f, d := range r.Fields() {
		if d.Name != descs[f].Name || d.Type != descs[f].Type || d.Arguments != descs[f].Arguments {
			t.Fatalf("field %d: %+v, want %+v", f, d, descs[f])
		}
	}
	for i, s := range samples {
		for f, v := range s {
			typ := descs[f].Type
			var (
				got []byte
				err error
			)
			switch {
			case typ == TypeInt:
				x, err := r.Int(i, f)
				if err != nil || x != v.i {
					t.Fatalf("sample %d field %d: Int %d %v, want %d", i, f, x, err, v.i)
				}
				continue
			case typ == TypeFloat:
				x, err := r.Float(i, f)
				if err != nil || x != v.f {
					t.Fatalf("sample %d field %d: Float %v %v, want %v", i, f, x, err, v.f)
				}
				continue
			case isImage(typ):
				var m ImageMeta
				m, got, err = r.Image(i, f)
				if m != v.img {
					t.Fatalf("sample %d field %d: image meta %+v, want %+v", i, f, m, v.img)
				}
			case isAudio(typ):
				var m AudioMeta
				m, got, err = r.Audio(i, f)
				if m != v.aud {
					t.Fatalf("sample %d field %d: audio meta %+v, want %+v", i, f, m, v.aud)
				}
			case isText(typ):
				var m TextMeta
				m, got, err = r.Text(i, f)
				if m != v.txt {
					t.Fatalf("sample %d field %d: text meta %+v, want %+v", i, f, m, v.txt)
				}
			default:
				got, err = r.Payload(i, f)
			}
			if err != nil || !bytes.Equal(got, v.payload) {
				t.Fatalf("sample %d field %d (%s): %d bytes, %v; want %d bytes", i, f, typ, len(got), err, len(v.payload))
			}
		}
	}
}

// TestRoundTripRandom builds random datasets of every field kind by the placement rule and
// checks that Open, every accessor and Verify agree with them, mapped and unmapped.
func TestRoundTripRandom(t *testing.T) {
	dir := t.TempDir()
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 7))
		pageSize := 4096 << rng.IntN(2)
		descs, samples := randomDataset(rng, pageSize)
		sums := seed%4 != 3
		b := buildFile(t, uint32(pageSize), descs, samples, sums)
		path := filepath.Join(dir, fmt.Sprintf("r%d.mldf", seed))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, mm := range []bool{true, false} {
			r, err := open(path, mm)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			checkDataset(t, r, descs, samples)
			rep, err := r.Verify()
			if err != nil {
				t.Fatalf("seed %d: Verify: %v", seed, err)
			}
			if rep.ChecksumsOK != sums || !rep.GapsChecked {
				t.Errorf("seed %d: report %+v", seed, rep)
			}
			d := r.Describe()
			if d.PagesUsed != rep.PagesUsed || d.PayloadBytes != rep.PayloadBytes {
				t.Errorf("seed %d: Describe %d pages %d bytes, Verify %d pages %d bytes", seed,
					d.PagesUsed, d.PayloadBytes, rep.PagesUsed, rep.PayloadBytes)
			}
			r.Close()
		}
	}
}

// TestRandomFlips flips one bit in every byte of a multi-field file: Open or Verify catches
// each one.
func TestRandomFlips(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 42))
	var descs []FieldDesc
	var samples [][]tval
	for len(samples) < 5 { // a dataset with some samples
		descs, samples = randomDataset(rng, 4096)
	}
	orig := buildFile(t, 4096, descs, samples, true)
	h, err := DecodeHeader(orig[HeaderOffset:])
	if err != nil {
		t.Fatal(err)
	}
	// Every byte outside the data region, and 1500 random bytes inside it.
	var offs []int
	for off := range orig {
		if uint64(off) < h.DataPtr || uint64(off) >= h.MetadataPtr {
			offs = append(offs, off)
		}
	}
	for range 1500 {
		offs = append(offs, int(h.DataPtr)+rng.IntN(int(h.MetadataPtr-h.DataPtr)))
	}
	b := make([]byte, len(orig))
	for _, off := range offs {
		copy(b, orig)
		b[off] ^= 1 << (off % 8)
		r, err := FromBytes("flip", b)
		if err == nil {
			_, err = r.Verify()
		}
		if err == nil {
			t.Fatalf("flip at byte %d of %d not detected", off, len(b))
		}
	}
}

// TestConcurrentReads reads every sample from 8 goroutines at once (run with -race).
func TestConcurrentReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	descs, samples := randomDataset(rng, 4096)
	for len(samples) == 0 {
		descs, samples = randomDataset(rng, 4096)
	}
	path := filepath.Join(t.TempDir(), "c.mldf")
	if err := os.WriteFile(path, buildFile(t, 4096, descs, samples, true), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	g, _ := errgroup.WithContext(context.Background())
	for w := range 8 {
		g.Go(func() error {
			for i := range r.NumSamples() {
				i := (i + w) % r.NumSamples()
				for f := range len(descs) {
					if _, err := r.Payload(i, f); err != nil && !errors.Is(err, ErrFieldType) {
						return err
					}
				}
			}
			_, err := r.Verify()
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

// benchFile builds a file of n samples of [label INT, data BYTES] with payloads of size
// bytes, 2 MiB pages.
func benchFile(b *testing.B, n, size int) string {
	descs := []FieldDesc{{Name: "label", Type: TypeInt}, {Name: "data", Type: TypeBytes}}
	payload := bytes.Repeat([]byte{0xA5}, size)
	samples := make([][]tval, n)
	for i := range samples {
		samples[i] = []tval{{i: int64(i)}, {payload: payload}}
	}
	path := filepath.Join(b.TempDir(), "bench.mldf")
	if err := os.WriteFile(path, buildFile(b, DefaultPageSize, descs, samples, true), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkRandomPayload: random access to one payload of 100 KB (zero-copy).
func BenchmarkRandomPayload(b *testing.B) {
	path := benchFile(b, 1000, 100_000)
	r, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	rng := rand.New(rand.NewPCG(1, 1))
	var sink byte
	b.ResetTimer()
	for range b.N {
		p, err := r.Payload(rng.IntN(r.NumSamples()), 1)
		if err != nil {
			b.Fatal(err)
		}
		sink ^= p[len(p)/2]
	}
	_ = sink
}

// BenchmarkVerify: Verify of a 100 MB file (1000 × 100 KB); reports MB/s of file.
func BenchmarkVerify(b *testing.B) {
	path := benchFile(b, 1000, 100_000)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ResetTimer()
	for range b.N {
		if _, err := Verify(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpen: Open and Close of a 1000-sample file.
func BenchmarkOpen(b *testing.B) {
	path := benchFile(b, 1000, 1000)
	b.ResetTimer()
	for range b.N {
		r, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}

func TestFirstNonZero(t *testing.T) {
	for _, n := range []int{0, 1, 4095, 4096, 4097, 3*4096 + 5} {
		b := make([]byte, n)
		if got := firstNonZero(b); got != -1 {
			t.Errorf("zeros[%d]: %d", n, got)
		}
		for _, j := range []int{0, n / 2, n - 1} {
			if j < 0 || j >= n {
				continue
			}
			b[j] = 9
			if got := firstNonZero(b); got != j {
				t.Errorf("n %d: non-zero at %d, got %d", n, j, got)
			}
			b[j] = 0
		}
	}
}
