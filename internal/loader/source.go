package loader

// The rest of the package sees a file through the types of this file: a container (one per
// file format, chosen by sniffing: source_mldf.go, source_beton.go) wrapped in a source.

import (
	"errors"
	"fmt"
	"io"

	"github.com/mldf/convert/format"
	_ "github.com/mldf/convert/format/beton" // registers .beton for format.Sniff
	_ "github.com/mldf/convert/format/mldf"  // registers MLDF for format.Sniff
	"github.com/mldf/convert/internal/inputfile"
)

// kind is what a field holds, as the loader's ops see it.
type kind int

const (
	kindOther kind = iota
	kindInt
	kindFloat
	kindBytes
	kindJSON
	kindNDArray
	kindImage
	kindAudioPCM
	kindAudioFLAC
	kindText
)

// Image payload codecs (value.Codec): raw pixels, or an encoded image (JPEG, PNG) that
// imgdec recognises by its bytes.
const (
	codecRaw     = 0
	codecEncoded = 1
)

// PCM sample formats of an AUDIO_WAVEFORM field's arguments.
const (
	pcmUnknown = 0
	pcmInt16   = 1
	pcmInt32   = 2
	pcmFloat32 = 3
)

// fieldInfo describes one field of the file: its type and the options its arguments record.
type fieldInfo struct {
	Index    int
	Name     string
	TypeName string
	Kind     kind
	Codec    string // what Describe reports: raw, jpeg, png, pcm, flac ("" when none)
	Payload  bool   // the field has a payload reference

	// images: the channels the arguments record (0 = not recorded), max side
	Channels int
	MaxRes   int
	// NDARRAY: layout 0 fixed (DType, Shape), 1 .npy payloads; Recorded says whether the
	// arguments were written.
	Recorded bool
	Layout   int
	DType    string
	Shape    []int
	// AUDIO_WAVEFORM: sample format (pcm*)
	PCMFormat int
	// TEXT_*: encoding of token ids (0 raw UTF-8)
	TokenWidth int
	// ClassNames of a class-label INT field, when the file holds them; NumClasses its
	// number of classes (0: not a class label).
	ClassNames []string
	NumClasses int
	// MetaSize is the size of the field's metadata struct.
	MetaSize int
}

// value is one field of one sample as the ops read it.
type value struct {
	Int     int64
	Float   float64
	Payload []byte // nil: empty (a missing value)
	// images
	W, H, C int
	Codec   int
	// audio
	Frames, AudioChannels, Rate, BitDepth int
}

// container is one opened file of a format the loader reads: its fields and, per sample and
// field, the value with its payload. Methods are safe for concurrent use.
type container interface {
	// format names the format in messages ("MLDF", "FFCV .beton").
	format() string
	version() string
	numSamples() int
	// pageSize is the file's page size; checked says whether payloads carry checksums.
	pageSize() int
	checked() bool
	// fieldInfos describes the fields (computed once, when the file is opened).
	fieldInfos() []fieldInfo
	// get reads field f of sample i (i and f in range), checking the payload's checksum when
	// verify is set. Errors name the file, the sample and the field.
	get(i, f int, verify bool) (value, error)
	// payloadSize is the length of get's Payload, without reading the payload.
	payloadSize(i, f int) (int, error)
	// payloadRange is where sample i's payload of field f lies in the file (0, 0 when empty
	// or unknown); rowRange the bytes of sample i's metadata row a read needs from the file
	// (0, 0 when the rows are in memory). prefetch fetches both ahead of a batch.
	payloadRange(i, f int) (off, n int64)
	rowRange(i int) (off, n int64)
	// dataRegion is where the payloads lie.
	dataRegion() (off, n int64)
	close() error
}

// source is an opened file: its container, and a bucket's block cache.
type source struct {
	c      container
	name   string
	fields []fieldInfo

	cache     *blockCache // a bucket's block cache, nil for a local file
	readahead int64       // bytes a batch may prefetch
}

// ErrFormat: a file of a format the loader does not read.
var ErrFormat = errors.New("loader: not a format the loader reads (MLDF or FFCV .beton)")

// sniff returns the registered format of the file named name whose first bytes ra holds.
func sniff(name string, ra io.ReaderAt, size int64) (string, error) {
	head := make([]byte, min(size, format.HeadSize))
	if _, err := ra.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("%s: reading the first %d bytes: %w", name, len(head), err)
	}
	f, err := format.Sniff(name, head)
	if err != nil {
		return "", nil // not sniffed: MLDF's reader says what is wrong with the signature
	}
	return f.Name, nil
}

// openLocal opens a local file, memory-mapped.
func openLocal(path string) (*source, error) {
	f, fi, err := inputfile.OpenRegular(path) // a named pipe is refused, never waited on
	if err != nil {
		return nil, err
	}
	kind, err := sniff(path, f, fi.Size())
	f.Close()
	if err != nil {
		return nil, err
	}
	var c container
	switch kind {
	case "beton":
		c, err = openBetonLocal(path)
	case "mldf", "":
		c, err = openMLDFLocal(path)
	default:
		err = fmt.Errorf("%s: %w: it is a %s file", path, ErrFormat, kind)
	}
	if err != nil {
		return nil, err
	}
	return newSource(c, path), nil
}

// openCached opens the size bytes of an object that the block cache bc reads; bc is closed
// with the source (or now, when opening fails).
func openCached(name string, bc *blockCache, size int64) (*source, error) {
	kind, err := sniff(name, bc, size)
	var c container
	switch {
	case err != nil:
	case kind == "beton":
		c, err = openBetonReaderAt(name, bc, size)
	case kind == "mldf" || kind == "":
		c, err = openMLDFCached(name, bc, size)
	default:
		err = fmt.Errorf("%s: %w: it is a %s file", name, ErrFormat, kind)
	}
	if err != nil {
		bc.Close()
		return nil, err
	}
	s := newSource(c, name)
	s.cache = bc
	return s, nil
}

func newSource(c container, name string) *source {
	return &source{c: c, name: name, fields: c.fieldInfos()}
}

func (s *source) version() string { return s.c.version() }
func (s *source) numSamples() int { return s.c.numSamples() }
func (s *source) pageSize() int   { return s.c.pageSize() }
func (s *source) checked() bool   { return s.c.checked() }

// close closes the file, then the bucket's cache and its object.
func (s *source) close() error {
	err := s.c.close()
	if s.cache != nil {
		err = errors.Join(err, s.cache.Close())
	}
	return err
}

// readerAtOnly hides a reader's Close from a format reader that would close it.
type readerAtOnly struct{ io.ReaderAt }

// payloadSize returns the size of sample i's payload in field f without reading it.
func (s *source) payloadSize(i, f int) (int, error) { return s.c.payloadSize(i, f) }

// payloadRange returns the byte range of sample i's payload in field f (0, 0 when empty).
func (s *source) payloadRange(i, f int) (off, n int64) { return s.c.payloadRange(i, f) }

// dataRegion returns the offset and size of the data region.
func (s *source) dataRegion() (off, n int64) { return s.c.dataRegion() }

// get reads field f of sample i. When verify is set it checks the payload's checksum.
func (s *source) get(i, f int, verify bool) (value, error) { return s.c.get(i, f, verify) }
