package audio

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// FolderOptions configure OpenFolderContext for a folder in a bucket.
type FolderOptions struct {
	// Store lists and reads a folder in a bucket; nil: a client of the Folder's own.
	Store *objstore.Client
	// Prefetch is how many clips of a bucket are fetched ahead of the one being emitted;
	// 0 means 8.
	Prefetch int
}

// fetchBatch is how many clips of a bucket Run hands to one Prefetcher.
const fetchBatch = 256

// OpenFolderContext is OpenFolder for a local path or a folder in a bucket (root an s3://,
// gs://, az:// or azblob:// URL): the objects under root + "/" are listed once with
// objstore's List, the first path segment below root is the class, objects directly under
// root are ignored, and the samples come in the local order (class, then path). A clip is
// read whole at run time, o.Prefetch of them fetched ahead. A missing bucket, denied access
// or a prefix with no clip is an error naming the URL.
func OpenFolderContext(ctx context.Context, root string, o FolderOptions) (*Folder, error) {
	if !sources.IsURL(root) {
		return OpenFolder(sources.LocalPath(root))
	}
	if o.Store == nil {
		o.Store = objstore.New()
	}
	if o.Prefetch <= 0 {
		o.Prefetch = 8
	}
	root = strings.TrimSuffix(root, "/")
	prefix := root + "/"
	f := &Folder{remote: true, store: o.Store, prefetch: o.Prefetch}
	classes := map[string]bool{}
	f.start()
	var key []byte
	for a, err := range o.Store.List(ctx, prefix) {
		if err != nil {
			f.b.Abort()
			return nil, fmt.Errorf("audio folder: %w", err)
		}
		rel := strings.TrimPrefix(a.URL, prefix)
		class, rest, ok := strings.Cut(rel, "/")
		if !ok || class == "" || rest == "" {
			continue // directly under root
		}
		classes[class] = true
		if !IsAudioFile(path.Base(rel)) {
			continue
		}
		// Key: the class (labels follow the sorted class names), then the path.
		key = append(append(append(key[:0], class...), 0), rel...)
		if err := f.add(key, record{path: a.URL, size: a.Size, first: true}, nil); err != nil {
			f.b.Abort()
			return nil, fmt.Errorf("audio folder %s: %w", root, err)
		}
	}
	if err := f.finish(); err != nil {
		return nil, fmt.Errorf("audio folder %s: %w", root, err)
	}
	if f.Len() == 0 {
		return nil, fmt.Errorf("%w under %s (want %s/<class>/<file>.wav|.flac)", ErrNoAudio, root, root)
	}
	for c := range classes {
		f.classes = append(f.classes, c)
	}
	sort.Strings(f.classes)
	f.decoder = func() func([]byte, *record) sample.Sample {
		return func(key []byte, r *record) sample.Sample {
			class, rel, _ := bytes.Cut(key, []byte{0})
			label := int64(sort.SearchStrings(f.classes, string(class)))
			return sample.Sample{Key: string(rel), Origin: r.path, InputBytes: r.size,
				Values: []sample.Column{{Name: ColAudio, Value: fileValue(r.path)}, {Name: ColLabel, Value: sample.Value{Kind: sample.KindInt, Int: label}}}}
		}
	}
	return f, nil
}

// Run emits the samples in order; a folder in a bucket has its clips fetched ahead and
// handed over as KindBytes values (a clip that cannot be read is a sample with Err set).
func (f *Folder) Run(ctx context.Context, emit func(sample.Sample) error) error {
	if !f.remote {
		return f.list.Run(ctx, emit)
	}
	batch := make([]sample.Sample, 0, fetchBatch)
	urls := make([]string, 0, fetchBatch)
	flush := func() error {
		err := sources.FetchInOrder(ctx, f.store, urls, f.prefetch, func(k int, b []byte, err error) error {
			s := batch[k]
			v := &s.Values[0].Value
			v.Kind, v.Bytes, v.Path = sample.KindBytes, b, ""
			if err != nil && s.Err == nil {
				s.Err = fmt.Errorf("audio folder: %w", err)
			}
			return emit(s)
		})
		batch, urls = batch[:0], urls[:0]
		return err
	}
	err := f.list.Run(ctx, func(s sample.Sample) error {
		batch = append(batch, s)
		urls = append(urls, s.Origin)
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
