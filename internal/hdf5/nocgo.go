//go:build !cgo

package hdf5

// Available reports whether libhdf5 is compiled in: false in this build.
func Available() bool { return false }

// File is unavailable without cgo.
type File struct{}

// Open returns ErrUnavailable.
func Open(path string) (*File, error) { return nil, ErrUnavailable }

// Close does nothing.
func (f *File) Close() error { return nil }

// Kind returns ErrUnavailable.
func (f *File) Kind(path string) (Kind, error) { return KindNone, ErrUnavailable }

// List returns ErrUnavailable.
func (f *File) List(group string) ([]string, error) { return nil, ErrUnavailable }

// Dataset is unavailable without cgo.
type Dataset struct {
	Dims [2]int64
	Rank int
	Type Type
}

// OpenDataset returns ErrUnavailable.
func (f *File) OpenDataset(path string) (*Dataset, error) { return nil, ErrUnavailable }

// Len returns 0.
func (d *Dataset) Len() int64 { return 0 }

// Close does nothing.
func (d *Dataset) Close() error { return nil }

// ReadFloat32 returns ErrUnavailable.
func (d *Dataset) ReadFloat32(off int64, dst []float32) error { return ErrUnavailable }

// ReadFloat64 returns ErrUnavailable.
func (d *Dataset) ReadFloat64(off int64, dst []float64) error { return ErrUnavailable }

// ReadInt64 returns ErrUnavailable.
func (d *Dataset) ReadInt64(off int64, dst []int64) error { return ErrUnavailable }

// ReadUint32 returns ErrUnavailable.
func (d *Dataset) ReadUint32(off int64, dst []uint32) error { return ErrUnavailable }

// ReadRowsFloat32 returns ErrUnavailable.
func (d *Dataset) ReadRowsFloat32(row, n int64, dst []float32) error { return ErrUnavailable }

// ReadBlockFloat32 returns ErrUnavailable.
func (d *Dataset) ReadBlockFloat32(row, n, col, m int64, dst []float32) error {
	return ErrUnavailable
}

// ReadColsFloat32 returns ErrUnavailable.
func (d *Dataset) ReadColsFloat32(col, n int64, dst []float32) error { return ErrUnavailable }

// ReadStrings returns ErrUnavailable.
func (d *Dataset) ReadStrings(off, n int64) ([]string, error) { return nil, ErrUnavailable }

// AttrStrings returns ErrUnavailable.
func (f *File) AttrStrings(obj, name string, maxBytes int64) ([]string, error) {
	return nil, ErrUnavailable
}

// AttrInts returns ErrUnavailable.
func (f *File) AttrInts(obj, name string) ([]int64, error) { return nil, ErrUnavailable }
