package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// batchSource hands samples over as batches of varying sizes (a sources.BatchSource) whose
// Decode copies them into the consumer's memory, overwriting what an earlier decode left
// there with 0xAA first: a pipeline that used a sample after handing its memory back would
// write the scribbles, and an error that kept an origin without copying it would show them.
type batchSource struct {
	*sliceSource
	sizes []int // batch sizes, cycled
	mu    sync.Mutex
	mems  map[*sources.Memory]bool // every memory decoded into
}

type testBatch struct {
	src     *batchSource
	samples []sample.Sample
}

func (s *batchSource) scribbleOne(m *sources.Memory) {
	b := m.Blocks[0][:cap(m.Blocks[0])]
	for i := range b {
		b[i] = 0xAA
	}
}

// scribble overwrites the bytes of every memory batches were decoded into.
func (s *batchSource) scribble() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for m := range s.mems {
		s.scribbleOne(m)
	}
}

func (s *batchSource) RunBatches(ctx context.Context, emit func(sources.Batch) error) error {
	rest := s.samples
	for k := 0; len(rest) > 0; k++ {
		n := min(s.sizes[k%len(s.sizes)], len(rest))
		if err := emit(&testBatch{src: s, samples: rest[:n]}); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return ctx.Err()
}

func (b *testBatch) Decode(m *sources.Memory) {
	b.src.mu.Lock()
	if b.src.mems == nil {
		b.src.mems = map[*sources.Memory]bool{}
	}
	b.src.mems[m] = true
	b.src.mu.Unlock()
	need := 0
	for _, s := range b.samples {
		need += len(s.Key) + len(s.Origin)
		for _, c := range s.Values {
			need += len(c.Value.Bytes)
		}
	}
	if len(m.Blocks) == 0 || cap(m.Blocks[0]) < need {
		m.Blocks = [][]byte{make([]byte, 0, need)}
	}
	b.src.scribbleOne(m)
	buf := m.Blocks[0][:0]
	keep := func(b []byte) []byte {
		at := len(buf)
		buf = append(buf, b...)
		return buf[at:len(buf):len(buf)]
	}
	str := func(s string) string {
		b := keep([]byte(s))
		return unsafe.String(unsafe.SliceData(b), len(b))
	}
	m.Samples, m.Columns = m.Samples[:0], m.Columns[:0]
	for _, s := range b.samples {
		at := len(m.Columns)
		for _, c := range s.Values {
			v := c.Value
			if v.Bytes != nil {
				v.Bytes = keep(v.Bytes)
			}
			m.Columns = append(m.Columns, sample.Column{Name: c.Name, Value: v})
		}
		s.Key, s.Origin = str(s.Key), str(s.Origin)
		s.Values = m.Columns[at:len(m.Columns):len(m.Columns)]
		m.Samples = append(m.Samples, s)
	}
	// Columns may have moved while growing: point the samples at the final array.
	at := 0
	for i := range m.Samples {
		n := len(m.Samples[i].Values)
		m.Samples[i].Values = m.Columns[at : at+n : at+n]
		at += n
	}
}

// refField is bytesField without the copy: its payload is the value's own bytes (as
// TEXT_RAW's is), which the page writer holds until the chunk is written.
type refField struct{ bytesField }

func (f refField) Encode(v sample.Value, meta []byte) ([]byte, error) {
	if _, err := f.bytesField.Encode(v, meta); err != nil {
		return nil, err
	}
	return v.Bytes, nil
}

func refFields() []Binding {
	return []Binding{{Field: intField{"label"}, Column: "label"}, {Field: refField{bytesField{"data"}}, Column: "data"}}
}

// TestBatchSource checks that a sources.BatchSource's batches, decoded by the workers into
// memory they reuse, give the same output and rejects as the same samples through Run, for
// any worker count, and that an error names its sample after the memory was reused.
func TestBatchSource(t *testing.T) {
	samples := mixedSamples(700, 4096, true)
	ref := outPath(t)
	refRejects := filepath.Join(t.TempDir(), "rejects.jsonl")
	mustRun(t, Config{Source: newSource(samples), Fields: refFields(), Output: ref,
		PageSize: 4096, Checksums: true, Workers: 2, RejectsPath: refRejects})
	want, _ := os.ReadFile(ref)
	wantRej, _ := os.ReadFile(refRejects)
	for _, workers := range []int{1, 2, 8} {
		for _, sizes := range [][]int{{1}, {7, 64, 3}, {700}} {
			out := outPath(t)
			rejects := filepath.Join(t.TempDir(), "rejects.jsonl")
			src := &batchSource{sliceSource: newSource(samples), sizes: sizes}
			rep := mustRun(t, Config{Source: src, Fields: refFields(), Output: out,
				PageSize: 4096, Checksums: true, Workers: workers, RejectsPath: rejects})
			got, _ := os.ReadFile(out)
			rej, _ := os.ReadFile(rejects)
			if !bytes.Equal(got, want) || !bytes.Equal(rej, wantRej) {
				t.Fatalf("workers %d batches %v: output or rejects differ from the samples' run (report %+v)", workers, sizes, rep)
			}
		}
	}
	src := &batchSource{sliceSource: newSource(samples), sizes: []int{5}}
	_, err := Run(context.Background(), Config{Source: src, Fields: refFields(), Output: outPath(t),
		PageSize: 4096, Workers: 2, OnError: Fail})
	src.scribble() // the memory is the pipeline's no more: the error must not lie in it
	if !contains(err, "data/s00003.bin", `field "data"`) || strings.Contains(err.Error(), "\xaa") {
		t.Fatalf("fail policy: %v", err)
	}
}
