package loader

// This file and source_beton.go are the only ones that read a file format: the rest of the
// package sees a file through the container interface.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/quote"
)

// mldfFile is an opened MLDF file: memory-mapped (cache nil), or in a bucket, its rows and
// payloads read through the block cache.
type mldfFile struct {
	r       *mldf.Reader
	name    string
	fields  []fieldInfo
	page    int
	check   bool // the file carries payload checksums
	cache   *blockCache
	layout  mldf.RowLayout
	metaPtr uint64
}

// openMLDFLocal opens a local MLDF file, memory-mapped.
func openMLDFLocal(path string) (*mldfFile, error) {
	r, err := mldf.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := newMLDF(r, nil)
	if err != nil {
		r.Close()
		return nil, err
	}
	return m, nil
}

// openMLDFCached opens the size bytes of an MLDF object that bc reads. On success the file
// reads through bc; the source closes it.
func openMLDFCached(name string, bc *blockCache, size int64) (*mldfFile, error) {
	r, err := mldf.OpenReaderAt(name, readerAtOnly{bc}, size) // the source closes bc
	if err != nil {
		return nil, err
	}
	m, err := newMLDF(r, bc)
	if err != nil {
		r.Close()
		return nil, err
	}
	return m, nil
}

func (s *mldfFile) format() string { return "MLDF" }

func (s *mldfFile) version() string {
	h := s.r.Header()
	return fmt.Sprintf("%d.%d", h.VersionMajor, h.VersionMinor)
}

func (s *mldfFile) pageSize() int           { return s.page }
func (s *mldfFile) checked() bool           { return s.check }
func (s *mldfFile) fieldInfos() []fieldInfo { return s.fields }

func newMLDF(r *mldf.Reader, cache *blockCache) (*mldfFile, error) {
	s := &mldfFile{r: r, name: r.Name(), cache: cache}
	h := r.Header()
	s.page = int(h.PageSize)
	s.check = h.Flags&mldf.FlagChecksummed != 0
	s.layout, s.metaPtr = r.Layout(), h.MetadataPtr
	for k, d := range r.Fields() {
		fi := fieldInfo{Index: k, Name: d.Name, TypeName: d.Type.String(), MetaSize: int(d.MetadataSize)}
		if n, ok := r.NumClasses(k); ok {
			fi.NumClasses = n
		}
		_, fi.Payload = mldf.MetaSize(d.Type)
		a := d.Arguments
		for _, c := range a {
			if c != 0 {
				fi.Recorded = true
				break
			}
		}
		le := binary.LittleEndian
		switch t := d.Type; {
		case t == mldf.TypeInt:
			fi.Kind = kindInt
			names, err := r.ClassNames(k)
			if err != nil {
				return nil, err
			}
			fi.ClassNames = names
		case t == mldf.TypeFloat:
			fi.Kind = kindFloat
		case t == mldf.TypeBytes:
			fi.Kind = kindBytes
		case t == mldf.TypeJSON:
			fi.Kind = kindJSON
		case t == mldf.TypeNDArray:
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
		case t >= mldf.TypeImageRaw && t <= mldf.TypeImagePNG:
			fi.Kind = kindImage
			fi.Codec = map[mldf.TypeID]string{mldf.TypeImageRaw: "raw", mldf.TypeImageJPEG: "jpeg", mldf.TypeImagePNG: "png"}[t]
			if fi.Recorded {
				fi.Channels, fi.MaxRes = int(a[3]), int(le.Uint32(a[4:]))
			}
		case t == mldf.TypeAudioWaveform:
			fi.Kind, fi.Codec = kindAudioPCM, "pcm"
			if fi.Recorded {
				fi.PCMFormat = int(a[1])
			}
		case t == mldf.TypeAudioCompressed:
			fi.Kind, fi.Codec = kindAudioFLAC, "flac"
		case t == mldf.TypeTextRaw:
			fi.Kind = kindText
		case t == mldf.TypeTextTokenized || t == mldf.TypeTextPacked:
			fi.Kind = kindText
			if fi.Recorded {
				fi.TokenWidth = int(a[1])
			}
		}
		s.fields = append(s.fields, fi)
	}
	return s, nil
}

func (s *mldfFile) numSamples() int { return s.r.NumSamples() }

func (s *mldfFile) close() error { return s.r.Close() }

// payloadSize returns the size of sample i's payload in field f without reading it.
func (s *mldfFile) payloadSize(i, f int) (int, error) {
	ref, err := s.ref(i, f)
	if err != nil {
		return 0, err
	}
	return int(ref.Size), nil
}

// payloadRange returns the byte range of sample i's payload in field f (0, 0 when empty).
func (s *mldfFile) payloadRange(i, f int) (off, n int64) {
	if !s.fields[f].Payload {
		return 0, 0
	}
	ref, err := s.ref(i, f)
	if err != nil || ref.Size == 0 {
		return 0, 0
	}
	return int64(ref.Ptr), int64(ref.Size)
}

// rowRange returns where sample i's metadata row lies.
func (s *mldfFile) rowRange(i int) (off, n int64) {
	return int64(s.metaPtr) + int64(i)*int64(s.layout.Size), int64(s.layout.Size)
}

// ref returns the payload reference of sample i, field f, unchecked.
func (s *mldfFile) ref(i, f int) (mldf.PayloadRef, error) {
	if s.cache == nil {
		return s.r.Ref(i, f)
	}
	m, err := s.metaCached(i, f)
	if err != nil {
		return mldf.PayloadRef{}, err
	}
	return mldf.GetRef(m), nil
}

// metaCached reads the metadata struct of sample i, field f from the block cache.
func (s *mldfFile) metaCached(i, f int) ([]byte, error) {
	if i < 0 || i >= s.r.NumSamples() || f < 0 || f >= len(s.fields) {
		return nil, fmt.Errorf("%s: sample %d, field %d: %w", s.name, i, f, mldf.ErrOutOfRange)
	}
	m := make([]byte, s.fields[f].MetaSize)
	off := s.metaPtr + uint64(i)*uint64(s.layout.Size) + uint64(s.layout.Offsets[f])
	if _, err := s.cache.ReadAt(m, int64(off)); err != nil {
		return nil, fmt.Errorf("%s: sample %d, field %s: reading the metadata row: %w", s.name, i, quote.Q(s.fields[f].Name), err)
	}
	return m, nil
}

// dataRegion returns the offset and size of the data region.
func (s *mldfFile) dataRegion() (off, n int64) {
	h := s.r.Header()
	return int64(h.DataPtr), int64(h.MetadataPtr) - int64(h.DataPtr)
}

// get reads field f of sample i. When verify is set it checks the payload's CRC-32C.
func (s *mldfFile) get(i, f int, verify bool) (value, error) {
	var v value
	fi := &s.fields[f]
	if s.cache != nil {
		return s.getCached(i, f, verify)
	}
	var err error
	switch fi.Kind {
	case kindInt:
		v.Int, err = s.r.Int(i, f)
		return v, err
	case kindFloat:
		v.Float, err = s.r.Float(i, f)
		return v, err
	case kindImage:
		var m mldf.ImageMeta
		m, v.Payload, err = s.r.Image(i, f)
		v.W, v.H, v.C, v.Codec = int(m.Width), int(m.Height), int(m.Channels), int(m.Mode)
	case kindAudioPCM, kindAudioFLAC:
		var m mldf.AudioMeta
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

// getCached is get for a file in a bucket: the row comes through the reader, the payload
// straight from the block cache (the reader's own small cache of 1 MiB blocks would copy a
// whole block per payload read in random order), checked by the reader's rules (R13, F1..F10).
func (s *mldfFile) getCached(i, f int, verify bool) (value, error) {
	var v value
	fi := &s.fields[f]
	m, err := s.metaCached(i, f)
	if err != nil {
		return v, err
	}
	bad := func(rule string, err error) error {
		return fmt.Errorf("%s: sample %d, field %s: %w: %w (rule %s)", s.name, i, quote.Q(fi.Name), mldf.ErrCorrupt, err, rule)
	}
	switch fi.Kind {
	case kindInt:
		v.Int = mldf.GetInt(m)
		if fi.NumClasses > 0 && (v.Int < -1 || v.Int >= int64(fi.NumClasses)) {
			return v, bad("F11", fmt.Errorf("class label %d outside -1..%d", v.Int, fi.NumClasses-1))
		}
		return v, nil
	case kindFloat:
		v.Float = mldf.GetFloat(m)
		return v, nil
	}
	if !fi.Payload {
		return v, nil
	}
	ref := mldf.GetRef(m)
	h := s.r.Header()
	if ref.Size > 0 {
		end := ref.Ptr + uint64(ref.Size)
		if ref.Ptr < h.DataPtr || end < ref.Ptr || end > h.MetadataPtr {
			return v, bad("R13", fmt.Errorf("payload [%d, %d+%d) lies outside the data region [%d, %d)", ref.Ptr, ref.Ptr, ref.Size, h.DataPtr, h.MetadataPtr))
		}
		v.Payload = make([]byte, ref.Size)
		if _, err := s.cache.ReadAt(v.Payload, int64(ref.Ptr)); err != nil {
			return v, fmt.Errorf("%s: sample %d, field %s: reading payload: %w", s.name, i, quote.Q(fi.Name), err)
		}
	}
	if err := s.r.FieldRules(f).Check(m, v.Payload); err != nil {
		var fe *mldf.FieldError
		rule := "F"
		if errors.As(err, &fe) {
			rule = fe.Rule
		}
		return v, bad(rule, err)
	}
	switch fi.Kind {
	case kindImage:
		im := mldf.GetImageMeta(m)
		v.W, v.H, v.C, v.Codec = int(im.Width), int(im.Height), int(im.Channels), int(im.Mode)
	case kindAudioPCM, kindAudioFLAC:
		am := mldf.GetAudioMeta(m)
		v.Frames, v.AudioChannels, v.Rate, v.BitDepth = int(am.NumSamples), int(am.NumChannels), int(am.SampleRate), int(am.BitDepth)
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
func (s *mldfFile) checkCRC(i, f int, payload []byte) error {
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
		return fmt.Errorf("%s: sample %d, field %s: %w (%w)", s.name, i, quote.Q(s.fields[f].Name), errNoEntry, mldf.ErrCorrupt)
	}
	e := s.r.AllocEntry(k)
	if got := mldf.PayloadChecksum(payload); got != e.Check {
		return fmt.Errorf("%s: sample %d, field %s: %w: payload CRC-32C %08x, allocation entry %d says %08x",
			s.name, i, quote.Q(s.fields[f].Name), mldf.ErrChecksum, got, k, e.Check)
	}
	return nil
}

// ndarrayNPY parses a .npy payload.
func parseNPY(b []byte) (descr string, shape []uint64, data []byte, err error) {
	a, err := mldf.ParseNPY(b)
	if err != nil {
		return "", nil, nil, err
	}
	return a.Descr, a.Shape, a.Data, nil
}

// dtypeSize returns the item size of a numpy descr.
func dtypeSize(descr string) (int, error) {
	n, err := mldf.DTypeSize(descr)
	return int(n), err
}
