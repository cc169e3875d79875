package imagefolder

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
	"github.com/mldf/convert/sources/listing"
)

// A folder in a bucket (root is a URL such as s3://bucket/train) is the objects under the
// prefix root + "/", listed once with objstore's List; the first path segment below the root
// is the class, as a first-level folder is locally. Its records differ from a local folder's
// only in the key, which names the class rather than its label (the labels are known only
// once the listing is done) and sorts the same way:
//
//	key:  class | 0x00 | directory relative to root | 0x00 | name   (class "" when flat)
//	data: uvarint size | 0

// fetchBatch is how many images of a bucket Run hands to one Prefetcher.
const fetchBatch = 256

// remoteKey builds a bucket record's key.
func remoteKey(b []byte, class, dirRel, name string) []byte {
	b = append(b[:0], class...)
	b = append(b, 0)
	b = append(b, dirRel...)
	b = append(b, 0)
	return append(b, name...)
}

// newRemote lists the folder at the URL root.
func newRemote(ctx context.Context, root string, exts map[string]bool, opts Options) (*Source, error) {
	store := opts.Store
	if store == nil {
		store = objstore.New()
	}
	root = strings.TrimSuffix(root, "/")
	prefix := root + "/"
	lopt := listing.Options{Dir: opts.TempDir, MemLimit: opts.memLimit}
	b := listing.NewBuilder(lopt)
	classes := map[string]bool{}
	var key, data []byte
	var skipped sources.Skipped
	objects, rootImages := 0, int64(0)
	for a, err := range store.List(ctx, prefix) {
		if err != nil {
			b.Abort()
			return nil, fmt.Errorf("imagefolder: %w", err)
		}
		objects++
		rel := strings.TrimPrefix(a.URL, prefix)
		segs := strings.Split(rel, "/")
		if rel == "" || strings.HasPrefix(segs[0], ".") {
			continue
		}
		class := ""
		if len(segs) > 1 {
			class = segs[0]
			classes[class] = true
		}
		hidden := false
		for _, sg := range segs {
			hidden = hidden || strings.HasPrefix(sg, ".") || sg == ""
		}
		name := segs[len(segs)-1]
		if hidden {
			continue
		}
		if !exts[strings.ToLower(path.Ext(name))] {
			skipped.Add(name)
			continue
		}
		if class == "" {
			rootImages++
		}
		dirRel := strings.Join(segs[:len(segs)-1], "/")
		key = remoteKey(key, class, dirRel, name)
		data = binary.AppendUvarint(data[:0], uint64(a.Size))
		data = binary.AppendUvarint(data, 0)
		if err := b.Add(key, data); err != nil {
			return nil, fmt.Errorf("imagefolder: %w", err)
		}
	}
	if objects == 0 {
		b.Abort()
		return nil, fmt.Errorf("%w: %s: no object under this prefix", ErrNotDir, root)
	}
	files, err := b.Finish()
	if err != nil {
		return nil, fmt.Errorf("imagefolder: listing %s: %w", root, err)
	}
	s := &Source{root: root, remote: true, store: store, prefetch: opts.Prefetch}
	switch opts.Layout {
	case LayoutAuto:
		s.flat = len(classes) == 0
	case LayoutClasses:
	case LayoutFlat:
		s.flat = true
	default:
		files.Close()
		return nil, fmt.Errorf("%w %d", errLayoutOption, opts.Layout)
	}
	switch {
	case s.flat && len(classes) > 0:
		// Flat order is by directory, then name: the class-first keys are re-sorted.
		fb := listing.NewBuilder(lopt)
		err := files.Each(func(_ int64, k, d []byte) error {
			_, rest, _ := bytes.Cut(k, []byte{0})
			key = append(append(key[:0], 0), rest...)
			return fb.Add(key, d)
		})
		files.Close()
		if err != nil {
			fb.Abort()
			return nil, fmt.Errorf("imagefolder: listing %s: %w", root, err)
		}
		if files, err = fb.Finish(); err != nil {
			return nil, fmt.Errorf("imagefolder: listing %s: %w", root, err)
		}
	case !s.flat:
		// The images directly under the root sort first (class ""); class layout skips them.
		err := files.Each(func(i int64, k, _ []byte) error {
			if i >= rootImages {
				return errStopEach
			}
			_, rest, _ := bytes.Cut(k, []byte{0})
			_, name, _ := bytes.Cut(rest, []byte{0})
			s.ignored = append(s.ignored, prefix+string(name))
			skipped.Add(string(name))
			return nil
		})
		if err != nil && err != errStopEach {
			return nil, fmt.Errorf("imagefolder: listing %s: %w", root, err)
		}
		all := files
		if files, err = all.Slice(rootImages, all.Len()); err != nil {
			return nil, err
		}
		for c := range classes {
			s.classes = append(s.classes, c)
		}
		sort.Strings(s.classes)
	}
	s.files = files
	s.skipped = skipped.Counts()
	if err := s.checkClasses(); err != nil {
		files.Close()
		return nil, err
	}
	return s, nil
}

var errStopEach = fmt.Errorf("stop")

// decodeRemote reads a bucket record.
func (s *Source) decodeRemote(key, data []byte) (entry, error) {
	e := entry{label: -1}
	class, rest, ok := bytes.Cut(key, []byte{0})
	if !ok {
		return e, fmt.Errorf("%w: record key without a separator", listing.ErrCorrupt)
	}
	if e.dirRel, e.nm, ok = bytes.Cut(rest, []byte{0}); !ok {
		return e, fmt.Errorf("%w: record key without a separator", listing.ErrCorrupt)
	}
	if !s.flat {
		e.label = sort.SearchStrings(s.classes, string(class))
		if e.label == len(s.classes) || s.classes[e.label] != string(class) {
			return e, fmt.Errorf("%w: record of an unknown class", listing.ErrCorrupt)
		}
	}
	size, n := binary.Uvarint(data)
	if n <= 0 {
		return e, fmt.Errorf("%w: bad record data", listing.ErrCorrupt)
	}
	e.size = int64(size)
	return e, nil
}

// runRemote emits the images of a bucket folder: each object read whole, Prefetch depth of
// them fetched ahead, handed over as a KindBytes value. An object that cannot be read
// (deleted since the listing, denied) is a sample with Err set, naming its URL.
func (s *Source) runRemote(ctx context.Context, emit func(sample.Sample) error) error {
	type item struct {
		i   int64
		e   entry
		rel string
	}
	batch := make([]item, 0, fetchBatch)
	urls := make([]string, 0, fetchBatch)
	flush := func() error {
		err := sources.FetchInOrder(ctx, s.store, urls, s.prefetch, func(k int, b []byte, err error) error {
			it := batch[k]
			url := urls[k]
			vals := make([]sample.Column, 1, 2)
			vals[0] = sample.Column{Name: ColumnImage, Value: sample.Value{Kind: sample.KindBytes, Bytes: b, Name: string(it.e.nm)}}
			if !s.flat {
				vals = append(vals, sample.Column{Name: ColumnLabel, Value: sample.Value{Kind: sample.KindInt, Int: int64(it.e.label)}})
			}
			smp := sample.Sample{Index: it.i, Key: it.rel, Origin: url, Values: vals, InputBytes: it.e.size}
			if err != nil {
				smp.Err = fmt.Errorf("imagefolder: %w", err)
			}
			return emit(smp)
		})
		batch, urls = batch[:0], urls[:0]
		return err
	}
	err := s.files.Each(func(i int64, key, data []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		e, err := s.decodeRemote(key, data)
		if err != nil {
			return fmt.Errorf("imagefolder: %s: %w", s.root, err)
		}
		e.dirRel, e.nm = bytes.Clone(e.dirRel), bytes.Clone(e.nm)
		rel := relPath(e.dirRel, e.nm)
		batch = append(batch, item{i: i, e: e, rel: rel})
		urls = append(urls, s.root+"/"+rel)
		if len(batch) == fetchBatch {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}
