package audio

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// Options configure the audio sources for inputs in a bucket (OpenFolderContext,
// OpenLibriSpeechContext, OpenManifestContext); local inputs ignore them.
type Options struct {
	// Store lists and reads buckets; nil: a client of the source's own.
	Store *objstore.Client
	// Prefetch is how many clips of a bucket are fetched ahead of the one being emitted;
	// 0 means 8.
	Prefetch int
}

// fetchBatch is how many samples Run hands to one Prefetcher.
const fetchBatch = 256

// maxTranscript bounds a LibriSpeech transcript read from a bucket (a chapter's is a few KB).
const maxTranscript = 64 << 20

func (o *Options) fill() {
	if o.Store == nil {
		o.Store = objstore.New()
	}
	if o.Prefetch <= 0 {
		o.Prefetch = 8
	}
}

// setRemote makes Run fetch the clips named by URLs through o's store.
func (l *list) setRemote(o Options) {
	l.remote, l.store, l.prefetch = true, o.Store, o.Prefetch
}

// listBucket lists the objects under root + "/" (root a bucket URL without a trailing
// slash), calling fn with each one's path below root.
func listBucket(ctx context.Context, store *objstore.Client, root string, fn func(rel string, a objstore.Attrs) error) error {
	prefix := root + "/"
	for a, err := range store.List(ctx, prefix) {
		if err != nil {
			return err
		}
		if err := fn(strings.TrimPrefix(a.URL, prefix), a); err != nil {
			return err
		}
	}
	return nil
}

// OpenFolderContext is OpenFolder for a local path or a folder in a bucket (root an s3://,
// gs://, az:// or azblob:// URL): the objects under root + "/" are listed once with
// objstore's List, the first path segment below root is the class, objects directly under
// root are ignored, and the samples come in the local order (class, then path). A clip is
// read whole at run time, o.Prefetch of them fetched ahead. A missing bucket, denied access
// or a prefix with no clip is an error naming the URL.
func OpenFolderContext(ctx context.Context, root string, o Options) (*Folder, error) {
	if local, ok := objstore.FolderOf(root).Dir(); ok { // a local folder is walked, which needs its path
		return OpenFolder(local)
	}
	o.fill()
	root = strings.TrimSuffix(root, "/")
	f := &Folder{}
	f.setRemote(o)
	classes := map[string]bool{}
	f.start()
	var key []byte
	err := listBucket(ctx, o.Store, root, func(rel string, a objstore.Attrs) error {
		class, rest, ok := strings.Cut(rel, "/")
		if !ok || class == "" || rest == "" {
			if rel != "" && !strings.HasSuffix(rel, "/") {
				f.skip(rel) // directly under root: not a clip
			}
			return nil
		}
		classes[class] = true
		if !IsAudioFile(path.Base(rel)) {
			if !strings.HasSuffix(rel, "/") {
				f.skip(rel)
			}
			return nil
		}
		// Key: the class (labels follow the sorted class names), then the path.
		key = append(append(append(key[:0], class...), 0), rel...)
		return f.add(key, record{path: a.URL, size: a.Size, first: true}, nil)
	})
	if err := f.end(err, "audio folder", root, root+"/<class>/<file>.wav|.flac"); err != nil {
		return nil, err
	}
	for c := range classes {
		f.classes = append(f.classes, c)
	}
	sort.Strings(f.classes)
	f.decoder = func(context.Context) func([]byte, *record) sample.Sample {
		return func(key []byte, r *record) sample.Sample {
			class, rel, _ := bytes.Cut(key, []byte{0})
			label := int64(sort.SearchStrings(f.classes, string(class)))
			return sample.Sample{Key: string(rel), Origin: r.path, InputBytes: r.size,
				Values: []sample.Column{{Name: ColAudio, Value: fileValue(r.path)}, {Name: ColLabel, Value: sample.Value{Kind: sample.KindInt, Int: label}}}}
		}
	}
	return f, nil
}

// OpenLibriSpeechContext is OpenLibriSpeech for a local path or a LibriSpeech tree in a
// bucket (root an s3://, gs://, az:// or azblob:// URL): the objects under root + "/" are
// listed once, the clips come in the local order (path order), and a chapter's transcript
// object is read when the run reaches the chapter. A missing bucket, denied access or a
// prefix with no clip is an error naming the URL.
func OpenLibriSpeechContext(ctx context.Context, root string, o Options) (*LibriSpeech, error) {
	if local, ok := objstore.FolderOf(root).Dir(); ok { // a local folder is walked, which needs its path
		return OpenLibriSpeech(local)
	}
	o.fill()
	root = strings.TrimSuffix(root, "/")
	ls := &LibriSpeech{}
	ls.setRemote(o)
	ls.start()
	err := listBucket(ctx, o.Store, root, func(rel string, a objstore.Attrs) error {
		if !IsAudioFile(path.Base(rel)) {
			if !isTranscript(rel) && !strings.HasSuffix(rel, "/") {
				ls.skip(rel)
			}
			return nil
		}
		return ls.add([]byte(rel), record{path: a.URL, size: a.Size, first: true}, nil)
	})
	if err := ls.end(err, "librispeech", root, "<speaker>/<chapter>/<id>.flac"); err != nil {
		return nil, err
	}
	ls.decoder = func(ctx context.Context) func([]byte, *record) sample.Sample {
		return ls.run(root, paths{url: true}, func(url string) ([]byte, error) {
			return readObject(ctx, o.Store, url, maxTranscript)
		})
	}
	return ls, nil
}

// readObject reads the whole object at url, refusing one larger than limit bytes.
func readObject(ctx context.Context, store *objstore.Client, url string, limit int64) ([]byte, error) {
	r, err := store.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if r.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes (the limit is %d)", url, r.Size(), limit)
	}
	b := make([]byte, 0, r.Size())
	buf := bytes.NewBuffer(b)
	if _, err := io.Copy(buf, io.LimitReader(r, limit+1)); err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	if int64(buf.Len()) > limit {
		return nil, fmt.Errorf("%s: more than %d bytes", url, limit)
	}
	return buf.Bytes(), nil
}

// paths split and join the paths of one kind: local paths (path/filepath) or, with url set,
// URLs ("/" separated, the scheme's "//" kept, which path.Dir would clean away).
type paths struct{ url bool }

func (k paths) dir(p string) string {
	if !k.url {
		return filepath.Dir(p)
	}
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

func (k paths) base(p string) string {
	if !k.url {
		return filepath.Base(p)
	}
	return p[strings.LastIndexByte(p, '/')+1:]
}

func (k paths) join(dir, name string) string {
	if !k.url {
		return filepath.Join(dir, name)
	}
	return dir + "/" + name
}

// rel returns p below root.
func (k paths) rel(root, p string) string {
	if !k.url {
		r, _ := filepath.Rel(root, p)
		return r
	}
	return strings.TrimPrefix(p, root+"/")
}

// runRemote is Run for a source whose clips are in a bucket: samples are decoded in order
// and handed on in batches of fetchBatch, each batch's clips fetched o.Prefetch ahead. A
// sample whose "audio" value is a URL gets the clip as a KindBytes value (Offset and Duration
// kept); consecutive samples naming one clip (the segments of a recording) share one fetch.
func (l *list) runRemote(ctx context.Context, emit func(sample.Sample) error) error {
	var (
		batch []sample.Sample
		use   []int  // per sample of batch: the index in urls of its clip or the one before
		own   []bool // per sample of batch: urls[use] is its clip
		urls  []string
	)
	flush := func() error {
		next := 0 // the first sample of batch not emitted
		emitUpTo := func(k int) error {
			for ; next < len(batch) && use[next] <= k; next++ {
				if err := emit(batch[next]); err != nil {
					return err
				}
			}
			return nil
		}
		err := sources.FetchInOrder(ctx, l.store, urls, l.prefetch, func(k int, b []byte, err error) error {
			for i := next; i < len(batch) && use[i] <= k; i++ {
				if !own[i] || use[i] != k {
					continue
				}
				s := &batch[i]
				v := audioValue(s)
				v.Kind, v.Bytes, v.Path = sample.KindBytes, b, ""
				if err != nil && s.Err == nil {
					s.Err = fmt.Errorf("audio source: %w", err)
				}
			}
			return emitUpTo(k)
		})
		if err == nil {
			err = emitUpTo(len(urls))
		}
		batch, use, own, urls = batch[:0], use[:0], own[:0], urls[:0]
		return err
	}
	err := l.each(ctx, func(s sample.Sample) error {
		fetch := false
		// Every clip is fetched through the store (a local clip of a manifest that also names
		// clips in a bucket too: the store reads local files as well).
		if v := audioValue(&s); v != nil && v.Kind == sample.KindFile {
			if len(urls) == 0 || urls[len(urls)-1] != v.Path {
				urls = append(urls, v.Path)
			}
			fetch = true
		}
		// A sample with nothing to fetch goes out after the clip before it (-1: none).
		batch = append(batch, s)
		use = append(use, len(urls)-1)
		own = append(own, fetch)
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

// audioValue returns the sample's "audio" value, or nil.
func audioValue(s *sample.Sample) *sample.Value {
	for i := range s.Values {
		if s.Values[i].Name == ColAudio {
			return &s.Values[i].Value
		}
	}
	return nil
}
