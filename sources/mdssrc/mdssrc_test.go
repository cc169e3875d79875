package mdssrc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/format/mds"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/s3test"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sample"
)

// write makes a dataset of n samples in shards of limit bytes.
func write(t *testing.T, n int, limit int64) string {
	t.Helper()
	dir := t.TempDir()
	cols := []mds.Column{{Name: "label", Encoding: "int"}, {Name: "text", Encoding: "str"}, {Name: "x", Encoding: "float32"},
		{Name: "arr", Encoding: "ndarray"}, {Name: "img", Encoding: "jpeg"}, {Name: "meta", Encoding: "json"}, {Name: "h", Encoding: "float16"}}
	w, err := mds.Create(dir, cols, mds.WriterOptions{SizeLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		arr, err := mds.EncodeNDArray(mds.NDArraySpec{}, mds.NDArray{Dtype: "int16", Shape: []int{2, i + 1}, Data: make([]byte, 4*(i+1))})
		if err != nil {
			t.Fatal(err)
		}
		err = w.Write([][]byte{binary.LittleEndian.AppendUint64(nil, uint64(i)), []byte(fmt.Sprint("text ", i)),
			binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(i)/2)), arr, []byte("\xff\xd8jpeg"), []byte(`{"i":1}`), {0x00, 0x3c}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runAll(src interface {
	Run(context.Context, func(sample.Sample) error) error
}) ([]sample.Sample, error) {
	var out []sample.Sample
	err := src.Run(context.Background(), func(s sample.Sample) error {
		out = append(out, s)
		return s.Err
	})
	return out, err
}

// TestRead: every sample of every shard, in order, with its values converted.
func TestRead(t *testing.T) {
	dir := write(t, 30, 400)
	src, err := New(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := runAll(src)
	if err != nil || len(got) != 30 || src.Len() != 30 || src.Inputs().Len() < 2 {
		t.Fatalf("%d samples of %d in %d shards: %v", len(got), src.Len(), src.Inputs().Len(), err)
	}
	for i, s := range got {
		if s.Index != int64(i) || s.Value("label").Int != int64(i) || string(s.Value("text").Bytes) != fmt.Sprint("text ", i) ||
			s.Value("x").Float != float64(i)/2 || s.Value("h").Float != 1 || s.Value("img").Name != "img.jpg" || s.Value("meta").Kind != sample.KindJSON {
			t.Fatalf("sample %d: %+v", i, s)
		}
		npy, err := mldf.ParseNPY(s.Value("arr").Bytes)
		if err != nil || npy.Descr != "<i2" || fmt.Sprint(npy.Shape) != fmt.Sprint([]uint64{2, uint64(i + 1)}) {
			t.Fatalf("sample %d: ndarray %+v %v", i, npy, err)
		}
	}
	// The shards partition the samples.
	k := 1
	a, _ := src.Range(0, k)
	b, _ := src.Range(k, int(src.Inputs().Len()))
	ga, _ := runAll(a)
	gb, _ := runAll(b)
	if len(ga)+len(gb) != 30 || gb[0].Value("label").Int != int64(len(ga)) {
		t.Fatalf("ranges of %d and %d samples", len(ga), len(gb))
	}
}

// TestBadDataset: a missing index, a pickled column and a truncated shard are errors naming
// the file, never a panic.
func TestBadDataset(t *testing.T) {
	if _, err := New(context.Background(), t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "index.json") {
		t.Fatalf("no index: %v", err)
	}
	dir := write(t, 3, 0)
	ix, _ := os.ReadFile(filepath.Join(dir, mds.IndexName))
	pkl := filepath.Join(t.TempDir(), "pkl")
	os.MkdirAll(pkl, 0o755)
	os.WriteFile(filepath.Join(pkl, mds.IndexName), []byte(strings.Replace(string(ix), `"json"`, `"pkl"`, 1)), 0o644)
	if _, err := New(context.Background(), pkl, nil); !errors.Is(err, mds.ErrUnsafe) {
		t.Fatalf("pkl column: %v", err)
	}
	shard := filepath.Join(dir, mds.ShardName(0))
	b, _ := os.ReadFile(shard)
	os.WriteFile(shard, b[:len(b)-5], 0o644)
	src, err := New(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runAll(src); !errors.Is(err, mds.ErrCorrupt) || !strings.Contains(err.Error(), shard) {
		t.Fatalf("truncated shard: %v", err)
	}
}

// TestMDSWriterFixture: a dataset MosaicML Streaming's own MDSWriter wrote reads sample for
// sample.
func TestMDSWriterFixture(t *testing.T) {
	src, err := New(context.Background(), "../../testdata/mds/text", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := runAll(src)
	if err != nil || len(got) != 8 {
		t.Fatalf("%d samples: %v", len(got), err)
	}
	for i, s := range got {
		if string(s.Value("text").Bytes) != fmt.Sprintf("sample number %d of the MDS fixture", i) || s.Value("label").Int != int64(i%3) {
			t.Fatalf("sample %d: %+v", i, s.Values)
		}
	}
}

// TestBucket: the same dataset under a bucket prefix gives the same samples as on disk.
func TestBucket(t *testing.T) {
	srv := s3test.Start(t)
	srv.MakeBucket(t, "bkt")
	s3test.Env(t, srv.Endpoint, s3test.SecretKey)
	c := objstore.New()
	defer c.Close()
	dir := write(t, 20, 500)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if err := c.WriteFile(context.Background(), "s3://bkt/ds/"+e.Name(), b); err != nil {
			t.Fatal(err)
		}
	}
	local, err := New(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := New(context.Background(), "s3://bkt/ds/", c)
	if err != nil {
		t.Fatal(err)
	}
	lg, err := runAll(local)
	if err != nil {
		t.Fatal(err)
	}
	rg, err := runAll(remote)
	if err != nil || len(rg) != len(lg) {
		t.Fatalf("%d samples from the bucket, %d on disk: %v", len(rg), len(lg), err)
	}
	for i := range lg {
		for k := range lg[i].Values {
			a, b := lg[i].Values[k].Value, rg[i].Values[k].Value
			if string(a.Bytes) != string(b.Bytes) || a.Int != b.Int || a.Float != b.Float {
				t.Fatalf("sample %d column %s differs", i, lg[i].Values[k].Name)
			}
		}
	}
}
