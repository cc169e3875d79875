package beton

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/pagewriter/multipart"
	"github.com/mldf/convert/pagewriter/pwtest"
)

// manySamples makes n golden-like samples of varied sizes: blobs up to 300 KB (some empty)
// so that payloads cross 2 MiB pages, missing JSON values, images of a few pixels.
func manySamples(n int) []tinySample {
	rng := rand.New(rand.NewPCG(7, 8))
	s := make([]tinySample, n)
	for i := range s {
		w, h := uint16(1+rng.IntN(5)), uint16(1+rng.IntN(4))
		x := tinySample{w: w, h: h, pix: make([]byte, int(w)*int(h)*3), label: int64(i), score: float64(i) / 4,
			arr: [4]float32{float32(i), 1, 2, 3}}
		for j := range x.pix {
			x.pix[j] = byte(i + j)
		}
		if i%5 != 0 {
			x.blob = bytes.Repeat([]byte{byte(i)}, rng.IntN(300<<10))
		}
		if i%3 != 0 {
			x.json = []byte(fmt.Sprintf(`{"i":%d}`, i))
		}
		s[i] = x
	}
	return s
}

// writeMany writes samples (4 per chunk) with the given workers to the sink open (the local
// file at path when nil), announcing count samples (-1: streaming).
func writeMany(t testing.TB, path string, open pagewriter.SinkOpener, samples []tinySample, count int64, workers int) (pagewriter.Result, error) {
	t.Helper()
	c, err := New(Options{PageSize: 2 << 20, Fields: tinyFields(t), Samples: count})
	must(t, err)
	if open == nil {
		open = pagewriter.LocalFile(path, pagewriter.FileOptions{})
	}
	w, err := pagewriter.New(open, c, pagewriter.Options{ScratchDir: t.TempDir()})
	if err != nil {
		return pagewriter.Result{}, err
	}
	const per = 4
	err = pwtest.Drive(context.Background(), w, workers, (len(samples)+per-1)/per, func(k int, b *pagewriter.Batch) error {
		for _, s := range samples[k*per : min(len(samples), (k+1)*per)] {
			row, pay := mldfRow(t, s)
			if err := b.Append(row, pay); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		w.Abort()
		return pagewriter.Result{}, err
	}
	return w.Finish()
}

// Every byte of the file reaches the sink exactly once, with the data region written in
// place (a known count) or staged (streaming), for any number of workers; the bytes are the
// local file's, and the same in both modes.
func TestExactlyOnce(t *testing.T) {
	samples := manySamples(60)
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.beton")
	if _, err := writeMany(t, ref, nil, samples, 60, 1); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(ref)
	must(t, err)
	r, err := Open(ref)
	must(t, err)
	if _, err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	for _, count := range []int64{60, -1} {
		for _, workers := range []int{1, 2, 8} {
			m := pwtest.NewMemory("mem.beton", dir)
			if _, err := writeMany(t, "", m.Opener(), samples, count, workers); err != nil {
				t.Fatalf("count %d, %d workers: %v", count, workers, err)
			}
			if !bytes.Equal(m.Bytes(), want) {
				t.Fatalf("count %d, %d workers: bytes differ from the local file at %d", count, workers, firstDiff(m.Bytes(), want))
			}
		}
	}
}

// A multipart upload holds the local file's bytes, in place and staged, with parts that cut
// pages and payloads anywhere; the part holding the header goes last.
func TestMultipartSameBytes(t *testing.T) {
	samples := manySamples(60)
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.beton")
	if _, err := writeMany(t, ref, nil, samples, 60, 1); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(ref)
	must(t, err)
	for _, count := range []int64{60, -1} {
		for _, part := range []int64{300_007, 2<<20 + 5} {
			for _, workers := range []int{1, 2, 8} {
				u := &pwtest.Uploader{}
				opt := multipart.Options{PartSize: part, MinPartSize: 1000, GrowEvery: 3, Buffers: 2, ScratchDir: dir}
				open := pagewriter.Multipart(context.Background(), "mem://x.beton", func() (multipart.Uploader, error) { return u, nil }, opt)
				if _, err := writeMany(t, "", open, samples, count, workers); err != nil {
					t.Fatalf("count %d, part %d, %d workers: %v", count, part, workers, err)
				}
				if got := u.Object(); !bytes.Equal(got, want) {
					t.Fatalf("count %d, part %d, %d workers: object differs from the local file at %d (sizes %d, %d)",
						count, part, workers, firstDiff(got, want), len(got), len(want))
				}
				ev := u.Events()
				if e := ev[len(ev)-2]; e.Kind != "end" || e.Part != 1 {
					t.Fatalf("count %d, part %d, %d workers: last upload is %+v, not part 1", count, part, workers, e)
				}
			}
		}
	}
}
