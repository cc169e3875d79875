package export

import (
	"archive/tar"
	"bufio"
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mldf/convert/format/mldf"
)

// DefaultShardSize is the shard size WebDataset uses when WebDatasetOptions.ShardSize is 0.
const DefaultShardSize = 1 << 30

// WebDatasetOptions configure WebDataset.
type WebDatasetOptions struct {
	// Image and Label name the image and the INT label field that get the short member names
	// KEY.jpg/KEY.png and KEY.cls even when other fields of their kind exist.
	Image, Label string
	// Key names a TEXT_RAW or BYTES field holding each sample's key (a stored __key__); it is
	// not written as a member. "" keys samples by their index, zero-padded to at least 6 digits.
	Key string
	// ShardSize bounds a shard's size in bytes (0 = DefaultShardSize); a sample is never split,
	// so a shard holding a single larger sample is larger.
	ShardSize int64
	// ShardSamples bounds the samples per shard (0 = no bound). Both bounds apply.
	ShardSamples int
}

// Member extensions by field type. Every field gets the member name KEY.EXT when it is the
// only field with that extension (or the one named by Image or Label), else
// KEY.<field name>.EXT. Image fields use jpg or png per sample.
//
//	INT → cls (decimal text)          FLOAT → <name>.txt always (decimal text, no convention)
//	TEXT_RAW → txt                    JSON → json            BYTES → bin
//	IMAGE_* → jpg (JPEG) or png (PNG; raw pixels encoded to PNG)
//	AUDIO_COMPRESSED → flac           AUDIO_WAVEFORM → wav (RIFF header from the arguments)
//	TEXT_TOKENIZED, TEXT_PACKED → npy (1-D <u2 or <u4 ids)
//	NDARRAY → npy (fixed layout: header from the arguments; npy-file layout: as stored)
//	other types → bin (the payload as stored)
func extension(t mldf.TypeID) string {
	switch {
	case t == mldf.TypeInt:
		return "cls"
	case t == mldf.TypeFloat:
		return "txt"
	case t == mldf.TypeTextRaw:
		return "txt"
	case t == mldf.TypeJSON:
		return "json"
	case isImage(t):
		return "jpg|png"
	case t == mldf.TypeAudioCompressed:
		return "flac"
	case t == mldf.TypeAudioWaveform:
		return "wav"
	case t == mldf.TypeTextTokenized, t == mldf.TypeTextPacked, t == mldf.TypeNDArray:
		return "npy"
	}
	return "bin"
}

// memberNames returns each field's member prefix ("" for the short name KEY.EXT, else
// "<name>." for KEY.<name>.EXT), skipping the key field (-1).
func memberNames(fields []mldf.FieldDesc, key, image, label int) ([]string, map[string]string, error) {
	count := map[string]int{}
	for k, fd := range fields {
		if k != key && fd.Type != mldf.TypeFloat {
			count[extension(fd.Type)]++
		}
	}
	prefix := make([]string, len(fields))
	members := map[string]string{}
	seen := map[string]string{}
	for k, fd := range fields {
		if k == key {
			continue
		}
		ext := extension(fd.Type)
		short := fd.Type != mldf.TypeFloat && (count[ext] == 1 || k == image || k == label)
		if !short {
			// A '/' would make a directory in the tar; names are otherwise kept.
			prefix[k] = strings.NewReplacer("/", "_", "\\", "_").Replace(fd.Name) + "."
		}
		members[fd.Name] = prefix[k] + ext
		for _, e := range strings.Split(ext, "|") {
			// WebDataset readers (tarsrc too) lower-case extensions: compare that way.
			id := strings.ToLower(prefix[k] + e)
			if other, dup := seen[id]; dup {
				return nil, nil, fmt.Errorf("%w: fields %q and %q would both be written as KEY.%s", ErrField, other, fd.Name, prefix[k]+e)
			}
			seen[id] = fd.Name
		}
	}
	return prefix, members, nil
}

// WebDataset writes r's samples to dir as WebDataset tar shards dir/shard-000000.tar, ….
// A sample's members are KEY.EXT files (see extension for the names and encodings), in field
// order, never split across shards; the tar headers are fixed (mode 0644, uid and gid 0,
// mtime 0, USTAR, or PAX for names USTAR cannot hold), so an export is byte-for-byte
// reproducible.
//
// An empty payload is written as an empty member for TEXT_RAW, BYTES and token fields and
// omitted for the others (it marks a missing optional value). dir must be absent or empty.
// Each shard is written to a temporary file, synced and renamed into place when complete; an
// error leaves the shards completed before it.
func WebDataset(ctx context.Context, r *mldf.Reader, dir string, o WebDatasetOptions) (Result, error) {
	var res Result
	if o.ShardSize < 0 || o.ShardSamples < 0 {
		return res, fmt.Errorf("%w: shard size %d, shard samples %d", ErrOption, o.ShardSize, o.ShardSamples)
	}
	if o.ShardSize == 0 {
		o.ShardSize = DefaultShardSize
	}
	fields := r.Fields()
	key, img, lab := -1, -1, -1
	var err error
	if o.Key != "" {
		if key, err = pickField(r, o.Key, "", "TEXT_RAW or BYTES", "--key", func(t mldf.TypeID) bool {
			return t == mldf.TypeTextRaw || t == mldf.TypeBytes
		}); err != nil {
			return res, err
		}
	}
	if o.Image != "" {
		if img, err = pickField(r, o.Image, "", "image", "--field", isImage); err != nil {
			return res, err
		}
	}
	if o.Label != "" {
		if lab, err = pickField(r, o.Label, "", "INT", "--label", func(t mldf.TypeID) bool { return t == mldf.TypeInt }); err != nil {
			return res, err
		}
	}
	prefix, members, err := memberNames(fields, key, img, lab)
	if err != nil {
		return res, fmt.Errorf("%s: %w", r.Name(), err)
	}
	res.Members = members
	if err := prepareDir(dir); err != nil {
		return res, err
	}
	n := r.NumSamples()
	indexWidth := max(6, len(strconv.Itoa(max(n-1, 0))))
	keys := map[string]int{}
	sw := &shardWriter{dir: dir}
	defer sw.abort()
	var batch []member
	for i := range n {
		if err := checkCtx(ctx, i); err != nil {
			return res, err
		}
		k := fmt.Sprintf("%0*d", indexWidth, i)
		if key >= 0 {
			p, err := r.Payload(i, key)
			if err != nil {
				return res, err
			}
			if err := checkKey(p); err != nil {
				return res, fmt.Errorf("%s: %w", where(r, i, key), err)
			}
			k = string(p)
			if j, dup := keys[k]; dup {
				return res, fmt.Errorf("%s: %w: key %q is also the key of sample %d", where(r, i, key), ErrValue, k, j)
			}
			keys[k] = i
		}
		batch = batch[:0]
		for f := range fields {
			if f == key {
				continue
			}
			b, ext, err := value(r, i, f, fields[f])
			if err != nil {
				return res, err
			}
			if b == nil {
				continue
			}
			if ext == "" {
				ext = extension(fields[f].Type)
			}
			batch = append(batch, member{name: k + "." + prefix[f] + ext, data: b})
		}
		if len(batch) == 0 {
			res.Skipped++
			continue
		}
		if err := sw.add(batch, o); err != nil {
			return res, fmt.Errorf("%s: %w", where(r, i, -1), err)
		}
		res.Samples++
	}
	if err := sw.finish(); err != nil {
		return res, err
	}
	res.Files, res.Bytes = sw.shards, sw.bytes
	return res, nil
}

// value returns the member bytes of sample i, field f, and its extension when it depends on
// the sample (images), or nil when the member is omitted. Every value is read through the
// reader's accessors, which apply the field rules F1..F10 of docs/FORMAT.md: a value whose
// metadata contradicts its payload, or names an unknown mode, codec or encoding, is an error
// naming the file, sample, field and rule.
func value(r *mldf.Reader, i, f int, fd mldf.FieldDesc) ([]byte, string, error) {
	wrap := func(err error) error { return fmt.Errorf("%s: %w", where(r, i, f), err) }
	switch t := fd.Type; {
	case t == mldf.TypeInt:
		v, err := r.Int(i, f)
		return strconv.AppendInt(nil, v, 10), "", err
	case t == mldf.TypeFloat:
		v, err := r.Float(i, f)
		return formatFloat(v), "", err
	case isImage(t):
		m, p, err := r.Image(i, f)
		if err != nil || len(p) == 0 {
			return nil, "", err
		}
		b, ext, err := imageFile(m, p)
		if err != nil {
			return nil, "", wrap(err)
		}
		return b, ext, nil
	case t == mldf.TypeAudioWaveform || t == mldf.TypeAudioCompressed:
		// r.Audio applies rules F5..F7: the codec is the one of the field's type (PCM for
		// AUDIO_WAVEFORM, FLAC for AUDIO_COMPRESSED), never guessed from anything else.
		m, p, err := r.Audio(i, f)
		if err != nil || len(p) == 0 {
			return nil, "", err
		}
		if m.Codec == mldf.AudioCodecFLAC {
			return p, "", nil
		}
		b, err := wavFile(fd.Arguments, m, p)
		if err != nil {
			return nil, "", wrap(err)
		}
		return b, "", nil
	case t == mldf.TypeTextTokenized || t == mldf.TypeTextPacked:
		m, p, err := r.Text(i, f)
		if err != nil {
			return nil, "", err
		}
		if len(p) == 0 && m.Encoding == mldf.TextUTF8 {
			// An empty payload's encoding may be unset: write an empty 32-bit id array.
			m.Encoding = mldf.TextTokens32
		}
		b, err := tokensFile(m, p)
		if err != nil {
			return nil, "", wrap(err)
		}
		return b, "", nil
	case t == mldf.TypeNDArray:
		p, err := r.Payload(i, f)
		if err != nil || len(p) == 0 {
			return nil, "", err
		}
		b, err := ndarrayFile(fd.Arguments, p)
		if err != nil {
			return nil, "", wrap(err)
		}
		return b, "", nil
	}
	p, err := r.Payload(i, f)
	if err != nil {
		return nil, "", err
	}
	if len(p) == 0 {
		if fd.Type == mldf.TypeTextRaw || fd.Type == mldf.TypeBytes {
			return []byte{}, "", nil
		}
		return nil, "", nil
	}
	return p, "", nil
}

// checkKey reports whether k can be a WebDataset key: UTF-8 without NUL, a relative
// slash-separated path without empty, "." or ".." parts whose last part has no dot (the key
// ends at the first dot of a member's base name).
func checkKey(k []byte) error {
	s := string(k)
	switch {
	case len(s) == 0:
		return fmt.Errorf("%w: empty key", ErrValue)
	case !utf8.ValidString(s) || strings.ContainsRune(s, 0):
		return fmt.Errorf("%w: key %q is not UTF-8 text without NUL", ErrValue, s)
	case strings.ContainsRune(path.Base(s), '.'):
		return fmt.Errorf("%w: key %q: its last part contains a dot (WebDataset keys end at the first dot of a name)", ErrValue, s)
	}
	for _, part := range strings.Split(s, "/") {
		if part == "" || part == "." || part == ".." || strings.ContainsRune(part, '\\') {
			return fmt.Errorf("%w: key %q is not a relative slash-separated path", ErrValue, s)
		}
	}
	return nil
}

type member struct {
	name string
	data []byte
}

// epoch is the fixed modification time of every member.
var epoch = time.Unix(0, 0)

// shardWriter writes samples to consecutive shards.
type shardWriter struct {
	dir     string
	shards  int   // shards completed
	bytes   int64 // their total size
	file    *atomicFile
	buf     *bufio.Writer
	count   *countingWriter
	tw      *tar.Writer
	samples int // in the open shard
}

// tarSize estimates the tar bytes of a batch: a header block per member (three more for a
// PAX record when the name is long or not ASCII) plus the data padded to 512 bytes.
func tarSize(batch []member) int64 {
	var n int64
	for _, m := range batch {
		n += 512 + (int64(len(m.data))+511)/512*512
		if len(m.name) > 100 || !isASCII(m.name) {
			n += 3 * 512
		}
	}
	return n
}

// add writes one sample's members, starting a new shard first when the open one is full.
func (s *shardWriter) add(batch []member, o WebDatasetOptions) error {
	if s.tw != nil && s.samples > 0 &&
		(s.count.n+tarSize(batch)+1024 > o.ShardSize || (o.ShardSamples > 0 && s.samples >= o.ShardSamples)) {
		if err := s.finish(); err != nil {
			return err
		}
	}
	if s.tw == nil {
		name := filepath.Join(s.dir, fmt.Sprintf("shard-%06d.tar", s.shards))
		f, err := createAtomic(name)
		if err != nil {
			return err
		}
		s.file = f
		s.buf = bufio.NewWriterSize(f, 1<<20)
		s.count = &countingWriter{w: s.buf}
		s.tw = tar.NewWriter(s.count)
		s.samples = 0
	}
	for _, m := range batch {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: m.name, Mode: 0o644, Size: int64(len(m.data)), ModTime: epoch}
		if err := s.tw.WriteHeader(h); err != nil {
			return fmt.Errorf("export: member %s: %w", m.name, err)
		}
		if _, err := s.tw.Write(m.data); err != nil {
			return fmt.Errorf("export: writing %s: %w", s.file.target, err)
		}
	}
	s.samples++
	return nil
}

// finish completes the open shard, if any.
func (s *shardWriter) finish() error {
	if s.tw == nil {
		return nil
	}
	err := s.tw.Close()
	if err == nil {
		err = s.buf.Flush()
	}
	if err != nil {
		s.abort()
		return fmt.Errorf("export: writing %s: %w", s.file.target, err)
	}
	if err := s.file.Commit(true); err != nil {
		s.tw = nil
		return err
	}
	s.bytes += s.count.n
	s.shards++
	s.tw = nil
	return nil
}

// abort removes an unfinished shard.
func (s *shardWriter) abort() {
	if s.tw != nil {
		s.file.Abort()
		s.tw = nil
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
