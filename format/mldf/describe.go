package mldf

import (
	"fmt"
	"strings"
)

// Description is what `convert inspect` prints about a file: the header, the fields with
// their arguments, the sizes of the sections and how full the pages are. It is computed
// from the tables without checking them (see Verify).
type Description struct {
	File          string
	FileSize      int64
	VersionMajor  uint16
	VersionMinor  uint16
	Flags         uint32
	FlagNames     []string // "little-endian", "compressed", "checksummed", "encrypted", "bitN"
	NumSamples    uint64
	NumFields     int
	PageSize      uint32
	FieldDescPtr  uint64
	DataPtr       uint64
	MetadataPtr   uint64
	AllocTablePtr uint64
	Checksum      uint64 // the header checksum as stored
	RowSize       int

	DataRegionBytes uint64 // metadata_ptr - data_ptr
	MetadataBytes   uint64 // num_samples × row size
	AllocEntries    int
	PayloadBytes    uint64  // sum of the allocation entries' sizes
	DataPages       uint64  // data region pages (the last one may be partial)
	PagesUsed       uint64  // distinct pages holding payload bytes
	PageFill        float64 // PayloadBytes / DataRegionBytes

	Fields []FieldInfo
}

// FieldInfo describes one field.
type FieldInfo struct {
	Index        int
	Name         string
	Type         TypeID
	TypeName     string // "IMAGE_JPEG", …
	Flags        uint16
	MetadataSize uint32
	RowOffset    int                 // offset of its struct in a metadata row
	Arguments    [ArgumentsSize]byte // raw; docs/fields/*.md decode them
	HasPayload   bool
	Payloads     int    // samples with a non-empty payload
	PayloadBytes uint64 // their total size
	MaxPayload   uint32
	// NumClasses is the number of classes of a class-label INT field (0 for other fields).
	NumClasses int `json:",omitempty"`
	// ClassNames are its class names when known; ClassNamesFrom says where they were found:
	// "file" (the file's class-names block) or the side file a caller read them from.
	ClassNames     []string `json:",omitempty"`
	ClassNamesFrom string   `json:",omitempty"`
	// ClassNamesError says why the file's class names could not be read (rule V8).
	ClassNamesError string `json:",omitempty"`
}

// Version returns "major.minor".
func (d *Description) Version() string { return fmt.Sprintf("%d.%d", d.VersionMajor, d.VersionMinor) }

// ArgumentsHex returns the arguments in hex, without the trailing zero bytes ("" when all
// bytes are zero, as for INT, FLOAT, BYTES and JSON fields in MLDF 1.0).
func (f *FieldInfo) ArgumentsHex() string {
	n := len(f.Arguments)
	for n > 0 && f.Arguments[n-1] == 0 {
		n--
	}
	return fmt.Sprintf("% x", f.Arguments[:n])
}

// FlagNames returns the names of the bits set in header flags.
func FlagNames(flags uint32) []string {
	names := []string{"little-endian", "compressed", "checksummed", "encrypted"}
	var out []string
	for b := range 32 {
		if flags&(1<<b) == 0 {
			continue
		}
		if b < len(names) {
			out = append(out, names[b])
		} else {
			out = append(out, fmt.Sprintf("bit%d", b))
		}
	}
	return out
}

// Describe summarises the file for `convert inspect`. It scans the allocation table once and
// the metadata table once per payload field (O(samples × fields + entries)), in place and
// dropping what it has read from the resident set as it goes, and reads no payload. Over
// positional reads (OpenReaderAt), a failed read leaves zeros in the summary: check Err.
func (r *Reader) Describe() Description {
	h := r.hdr
	d := Description{
		File: r.name, FileSize: int64(r.size), VersionMajor: h.VersionMajor, VersionMinor: h.VersionMinor,
		Flags: h.Flags, FlagNames: FlagNames(h.Flags), NumSamples: h.NumSamples, NumFields: len(r.fields),
		PageSize: h.PageSize, FieldDescPtr: h.FieldDescPtr, DataPtr: h.DataPtr, MetadataPtr: h.MetadataPtr,
		AllocTablePtr: h.AllocTablePtr, Checksum: h.Checksum, RowSize: r.rowSize,
		DataRegionBytes: h.MetadataPtr - h.DataPtr, MetadataBytes: r.metaLen,
		AllocEntries: r.NumAllocEntries(),
	}
	ps := uint64(h.PageSize)
	d.DataPages = (d.DataRegionBytes + ps - 1) / ps
	var lastPage uint64
	havePage := false
	for _, e := range r.AllocTable() {
		r.touch(AllocEntrySize)
		end, ok := add64(e.Ptr, uint64(e.Size))
		if !ok || e.Size == 0 {
			continue
		}
		d.PayloadBytes += uint64(e.Size)
		first, last := e.Ptr/ps, (end-1)/ps
		if havePage && first <= lastPage {
			first = lastPage + 1
		}
		if last >= first {
			d.PagesUsed += last - first + 1
		}
		lastPage, havePage = max(lastPage, last), true
	}
	if d.DataRegionBytes > 0 {
		d.PageFill = float64(d.PayloadBytes) / float64(d.DataRegionBytes)
	}
	for k, fd := range r.fields {
		fi := FieldInfo{Index: k, Name: fd.Name, Type: fd.Type, TypeName: fd.Type.String(), Flags: fd.Flags,
			MetadataSize: fd.MetadataSize, RowOffset: r.layout.Offsets[k], Arguments: fd.Arguments, HasPayload: r.hasPayload[k]}
		fi.NumClasses, _ = r.NumClasses(k)
		if names, err := r.ClassNames(k); err != nil {
			fi.ClassNamesError = err.Error()
		} else if names != nil {
			fi.ClassNames, fi.ClassNamesFrom = names, "file"
		}
		if fi.HasPayload {
			for i := range r.numSamples {
				r.touch(uint64(r.rowSize))
				ref := GetRef(r.Meta(i, k))
				if ref.Size > 0 {
					fi.Payloads++
					fi.PayloadBytes += uint64(ref.Size)
					fi.MaxPayload = max(fi.MaxPayload, ref.Size)
				}
			}
		}
		d.Fields = append(d.Fields, fi)
	}
	return d
}

// FieldValue is one field of one sample, decoded from its metadata struct: what
// `convert inspect --sample N` prints.
type FieldValue struct {
	Field int
	Name  string
	Type  TypeID
	Int   int64      // INT
	Float float64    // FLOAT
	Ref   PayloadRef // payload-bearing types
	Image ImageMeta  // IMAGE_*
	Audio AudioMeta  // AUDIO_*
	Text  TextMeta   // TEXT_*
}

// String formats the value on one line, e.g. `label INT 7` or
// `image IMAGE_JPEG ptr=4096 size=5120 256x192x3 mode=1` (height × width × channels).
func (v FieldValue) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", v.Name, v.Type)
	switch {
	case v.Type == TypeInt:
		fmt.Fprintf(&b, " %d", v.Int)
		return b.String()
	case v.Type == TypeFloat:
		fmt.Fprintf(&b, " %g", v.Float)
		return b.String()
	}
	fmt.Fprintf(&b, " ptr=%d size=%d", v.Ref.Ptr, v.Ref.Size)
	switch {
	case isImage(v.Type):
		fmt.Fprintf(&b, " %dx%dx%d mode=%d", v.Image.Height, v.Image.Width, v.Image.Channels, v.Image.Mode)
	case isAudio(v.Type):
		fmt.Fprintf(&b, " frames=%d rate=%d channels=%d bits=%d codec=%d",
			v.Audio.NumSamples, v.Audio.SampleRate, v.Audio.NumChannels, v.Audio.BitDepth, v.Audio.Codec)
	case isText(v.Type):
		fmt.Fprintf(&b, " tokens=%d encoding=%d", v.Text.NumTokens, v.Text.Encoding)
	}
	return b.String()
}

// Sample decodes every field's metadata struct of sample i. It reads no payload.
func (r *Reader) Sample(i int) ([]FieldValue, error) {
	if r.closed {
		return nil, fmt.Errorf("%s: %w", r.name, ErrClosed)
	}
	if i < 0 || i >= r.numSamples {
		return nil, fmt.Errorf("%s: %w: sample %d of %d", r.name, ErrOutOfRange, i, r.numSamples)
	}
	out := make([]FieldValue, len(r.fields))
	for f, fd := range r.fields {
		m := r.Meta(i, f)
		v := FieldValue{Field: f, Name: fd.Name, Type: fd.Type}
		switch {
		case fd.Type == TypeInt:
			v.Int = GetInt(m)
		case fd.Type == TypeFloat:
			v.Float = GetFloat(m)
		default:
			v.Ref = GetRef(m)
		}
		switch {
		case isImage(fd.Type):
			v.Image = GetImageMeta(m)
		case isAudio(fd.Type):
			v.Audio = GetAudioMeta(m)
		case isText(fd.Type):
			v.Text = GetTextMeta(m)
		}
		out[f] = v
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
