package loader

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/mldf/convert/format/beton"
	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/internal/quote"
)

// betonFile is an opened FFCV .beton file. The reader holds its tables (header, descriptors,
// metadata rows, allocation table) in memory and checks each row as it is read; payloads are
// sliced from the mapped file (data), or read through ra (a bucket's block cache, or a local
// file where mmap is not available). A .beton carries no checksums.
type betonFile struct {
	r      *beton.Reader
	name   string
	fields []fieldInfo
	data   []byte      // the mapped file, or nil
	ra     io.ReaderAt // when data is nil
	closer func() error
}

// openBetonLocal opens a local .beton file, memory-mapped when the platform can.
func openBetonLocal(path string) (*betonFile, error) {
	f, fi, err := inputfile.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	if data, err := mmapFile(f, fi.Size()); err == nil {
		f.Close() // the mapping outlives the descriptor
		r, err := beton.NewReader(bytes.NewReader(data), int64(len(data)), path)
		if err != nil {
			munmap(data)
			return nil, err
		}
		return newBeton(r, path, data, nil, func() error { return munmap(data) }), nil
	}
	r, err := beton.NewReader(f, fi.Size(), path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return newBeton(r, path, nil, f, f.Close), nil
}

// openBetonReaderAt opens the size bytes of a .beton object that ra (a bucket's block cache,
// which the source closes) reads.
func openBetonReaderAt(name string, ra io.ReaderAt, size int64) (*betonFile, error) {
	r, err := beton.NewReader(ra, size, name)
	if err != nil {
		return nil, err
	}
	return newBeton(r, name, nil, ra, func() error { return nil }), nil
}

func newBeton(r *beton.Reader, name string, data []byte, ra io.ReaderAt, closer func() error) *betonFile {
	b := &betonFile{r: r, name: name, data: data, ra: ra, closer: closer}
	for k, f := range r.Fields() {
		fi := fieldInfo{Index: k, Name: f.Name, TypeName: f.Type.String(), Payload: beton.PtrOffset(f.Type) >= 0}
		switch f.Type {
		case beton.TypeInt:
			fi.Kind = kindInt
		case beton.TypeFloat:
			fi.Kind = kindFloat
		case beton.TypeBytes:
			fi.Kind = kindBytes
		case beton.TypeJSON:
			fi.Kind = kindJSON
		case beton.TypeNDArray:
			fi.Kind, fi.Recorded, fi.Layout, fi.DType = kindNDArray, true, 0, f.DType
			for _, d := range f.Shape {
				fi.Shape = append(fi.Shape, int(d))
			}
		case beton.TypeRGBImage:
			// FFCV stores each image as a JPEG or as raw RGB (its "smart" mode mixes them)
			fi.Kind, fi.Codec, fi.Channels = kindImage, "jpeg or raw", 3
		}
		b.fields = append(b.fields, fi)
	}
	return b
}

func (b *betonFile) format() string              { return "FFCV .beton" }
func (b *betonFile) version() string             { return strconv.Itoa(int(b.r.Header().Version)) }
func (b *betonFile) numSamples() int             { return int(b.r.NumSamples()) }
func (b *betonFile) pageSize() int               { return int(b.r.Header().PageSize) }
func (b *betonFile) checked() bool               { return false }
func (b *betonFile) fieldInfos() []fieldInfo     { return b.fields }
func (b *betonFile) rowRange(int) (int64, int64) { return 0, 0 }
func (b *betonFile) close() error                { return b.closer() }

func (b *betonFile) dataRegion() (off, n int64) {
	return b.r.DataStart(), int64(b.r.Header().AllocTablePtr) - b.r.DataStart()
}

// get reads field f of sample i. A .beton has no checksums (Open refuses verify).
func (b *betonFile) get(i, f int, _ bool) (value, error) {
	var v value
	bv, e, err := b.r.Entry(int64(i), f)
	if err != nil {
		return v, err
	}
	switch b.fields[f].Kind {
	case kindInt:
		v.Int = bv.Int
		return v, nil
	case kindFloat:
		v.Float = bv.Float
		return v, nil
	case kindJSON:
		v.Payload = bv.Data // read and checked by the reader, without its NUL
		return v, nil
	case kindImage:
		v.W, v.H, v.C, v.Codec = int(bv.Image.Width), int(bv.Image.Height), 3, codecEncoded
		if bv.Image.Mode == beton.ImageRaw {
			v.Codec = codecRaw
		}
	}
	v.Payload, err = b.payload(i, f, e)
	return v, err
}

// payload returns the bytes of allocation e (which the reader checked lies inside the file).
func (b *betonFile) payload(i, f int, e beton.AllocEntry) ([]byte, error) {
	if e.Size == 0 {
		return nil, nil
	}
	if b.data != nil {
		end := e.Ptr + e.Size
		return b.data[e.Ptr:end:end], nil
	}
	p := make([]byte, e.Size)
	if _, err := b.ra.ReadAt(p, int64(e.Ptr)); err != nil {
		return nil, fmt.Errorf("%s: sample %d, field %s: reading the payload: %w", b.name, i, quote.Q(b.fields[f].Name), err)
	}
	return p, nil
}

// payloadSize returns the length of get's payload: the allocation's size, less a JSON
// payload's NUL.
func (b *betonFile) payloadSize(i, f int) (int, error) {
	bv, e, err := b.r.Entry(int64(i), f)
	if err != nil {
		return 0, err
	}
	if b.fields[f].Kind == kindJSON {
		return len(bv.Data), nil
	}
	return int(e.Size), nil
}

// payloadRange returns where sample i's payload of field f lies (0, 0 when empty).
func (b *betonFile) payloadRange(i, f int) (off, n int64) {
	if !b.fields[f].Payload {
		return 0, 0
	}
	_, e, err := b.r.Entry(int64(i), f)
	if err != nil || e.Size == 0 {
		return 0, 0
	}
	return int64(e.Ptr), int64(e.Size)
}
