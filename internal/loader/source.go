package loader

// This file and remote.go are the only ones that import the reader and the manifest: the
// rest of the package sees a file through the types below.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/manifest"
	"github.com/mldf/convert/reader"
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

// Image payload codecs (the IMAGE_* metadata mode).
const codecRaw = 0

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
	Payload  bool // the field has a payload reference

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
	// ClassNames of a class-label INT field, when the file holds them.
	ClassNames []string
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

// source is an opened MLDF file.
type source struct {
	r        *reader.Reader
	name     string
	fields   []fieldInfo
	pageSize int
	checked  bool // the file carries payload checksums

	cache     *blockCache // a bucket's block cache, nil for a mapped file
	readahead int64       // bytes a batch may prefetch
}

func newSource(r *reader.Reader) (*source, error) {
	s := &source{r: r, name: r.Name()}
	h := r.Header()
	s.pageSize = int(h.PageSize)
	s.checked = h.Flags&manifest.FlagChecksummed != 0
	for k, d := range r.Fields() {
		fi := fieldInfo{Index: k, Name: d.Name, TypeName: d.Type.String()}
		_, fi.Payload = manifest.MetaSize(d.Type)
		a := d.Arguments
		for _, c := range a {
			if c != 0 {
				fi.Recorded = true
				break
			}
		}
		le := binary.LittleEndian
		switch t := d.Type; {
		case t == manifest.TypeInt:
			fi.Kind = kindInt
			names, err := r.ClassNames(k)
			if err != nil {
				return nil, err
			}
			fi.ClassNames = names
		case t == manifest.TypeFloat:
			fi.Kind = kindFloat
		case t == manifest.TypeBytes:
			fi.Kind = kindBytes
		case t == manifest.TypeJSON:
			fi.Kind = kindJSON
		case t == manifest.TypeNDArray:
			fi.Kind = kindNDArray
			if fi.Recorded {
				if err := r.FieldRules(k).Arguments(); err != nil {
					return nil, fmt.Errorf("%s: field %s: %w", s.name, quote.Q(d.Name), err)
				}
				fi.Layout = int(a[1])
				if fi.Layout == 0 {
					fi.DType = strings.TrimRight(string(a[2:18]), "\x00")
					for i := range int(a[18]) {
						fi.Shape = append(fi.Shape, int(le.Uint64(a[24+8*i:])))
					}
				}
			}
		case t >= manifest.TypeImageRaw && t <= manifest.TypeImagePNG:
			fi.Kind = kindImage
			if fi.Recorded {
				fi.Channels, fi.MaxRes = int(a[3]), int(le.Uint32(a[4:]))
			}
		case t == manifest.TypeAudioWaveform:
			fi.Kind = kindAudioPCM
			if fi.Recorded {
				fi.PCMFormat = int(a[1])
			}
		case t == manifest.TypeAudioCompressed:
			fi.Kind = kindAudioFLAC
		case t == manifest.TypeTextRaw:
			fi.Kind = kindText
		case t == manifest.TypeTextTokenized || t == manifest.TypeTextPacked:
			fi.Kind = kindText
			if fi.Recorded {
				fi.TokenWidth = int(a[1])
			}
		}
		s.fields = append(s.fields, fi)
	}
	return s, nil
}

func (s *source) numSamples() int { return s.r.NumSamples() }

func (s *source) close() error { return s.r.Close() }

// payloadSize returns the size of sample i's payload in field f without reading it.
func (s *source) payloadSize(i, f int) (int, error) {
	ref, err := s.r.Ref(i, f)
	if err != nil {
		return 0, err
	}
	return int(ref.Size), nil
}

// payloadRange returns the byte range of sample i's payload in field f (0, 0 when empty).
func (s *source) payloadRange(i, f int) (off, n int64) {
	ref, err := s.r.Ref(i, f)
	if err != nil || ref.Size == 0 {
		return 0, 0
	}
	return int64(ref.Ptr), int64(ref.Size)
}

// dataRegion returns the offset and size of the data region.
func (s *source) dataRegion() (off, n int64) {
	h := s.r.Header()
	return int64(h.DataPtr), int64(h.MetadataPtr) - int64(h.DataPtr)
}

// get reads field f of sample i. When verify is set it checks the payload's CRC-32C.
func (s *source) get(i, f int, verify bool) (value, error) {
	var v value
	fi := &s.fields[f]
	var err error
	switch fi.Kind {
	case kindInt:
		v.Int, err = s.r.Int(i, f)
		return v, err
	case kindFloat:
		v.Float, err = s.r.Float(i, f)
		return v, err
	case kindImage:
		var m manifest.ImageMeta
		m, v.Payload, err = s.r.Image(i, f)
		v.W, v.H, v.C, v.Codec = int(m.Width), int(m.Height), int(m.Channels), int(m.Mode)
	case kindAudioPCM, kindAudioFLAC:
		var m manifest.AudioMeta
		m, v.Payload, err = s.r.Audio(i, f)
		v.Frames, v.AudioChannels, v.Rate, v.BitDepth = int(m.NumSamples), int(m.NumChannels), int(m.SampleRate), int(m.BitDepth)
	case kindText:
		_, v.Payload, err = s.r.Text(i, f)
	default:
		v.Payload, err = s.r.Payload(i, f)
	}
	if err != nil {
		return v, err
	}
	if verify && len(v.Payload) > 0 {
		if err := s.checkCRC(i, f, v.Payload); err != nil {
			return v, err
		}
	}
	return v, nil
}

// errNoEntry: a payload has no allocation entry (the file breaks rule V5).
var errNoEntry = errors.New("no allocation entry for the payload")

// checkCRC compares the payload's CRC-32C with its allocation entry, found by binary search
// (entries are in file order, rule V2).
func (s *source) checkCRC(i, f int, payload []byte) error {
	ref, err := s.r.Ref(i, f)
	if err != nil {
		return err
	}
	n := s.r.NumAllocEntries()
	k := sort.Search(n, func(k int) bool { return s.r.AllocEntry(k).Ptr >= ref.Ptr })
	if err := s.r.Err(); err != nil {
		return err
	}
	if k == n || s.r.AllocEntry(k).Ptr != ref.Ptr {
		return fmt.Errorf("%s: sample %d, field %s: %w (%w)", s.name, i, quote.Q(s.fields[f].Name), errNoEntry, reader.ErrCorrupt)
	}
	e := s.r.AllocEntry(k)
	if got := manifest.PayloadChecksum(payload); got != e.Check {
		return fmt.Errorf("%s: sample %d, field %s: %w: payload CRC-32C %08x, allocation entry %d says %08x",
			s.name, i, quote.Q(s.fields[f].Name), reader.ErrChecksum, got, k, e.Check)
	}
	return nil
}

// ndarrayNPY parses a .npy payload.
func parseNPY(b []byte) (descr string, shape []uint64, data []byte, err error) {
	a, err := manifest.ParseNPY(b)
	if err != nil {
		return "", nil, nil, err
	}
	return a.Descr, a.Shape, a.Data, nil
}

// dtypeSize returns the item size of a numpy descr.
func dtypeSize(descr string) (int, error) {
	n, err := manifest.DTypeSize(descr)
	return int(n), err
}
