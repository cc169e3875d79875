package objstore

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/mldf/convert/internal/quote"
)

// Schemes of the stores this package reaches. A plain path (no scheme) is SchemeFile.
const (
	SchemeS3    = "s3"
	SchemeGCS   = "gs"
	SchemeAzure = "azblob" // also written az://
	SchemeFile  = "file"
)

// Location is a parsed URL: a bucket and a key in a store, or a local path.
//
// The key is taken literally: no percent-decoding, no query string ("?" and "#" are part
// of the key where the store allows them), so s3://b/a%20b names the key "a%20b".
type Location struct {
	Scheme string // SchemeS3, SchemeGCS, SchemeAzure or SchemeFile
	Bucket string // the bucket or container; "" for SchemeFile
	Key    string // the object key ("" names the bucket's root); for SchemeFile the path
	prefix string // how the caller spelled scheme and bucket ("s3://b/", "az://c/", "file://", "")
}

// Parse parses a URL or a local path. It accepts s3://bucket/key, gs://bucket/key,
// azblob://container/key, az://container/key, file:///absolute/path and plain paths
// (relative or absolute, kept as written). The key may be empty (the bucket's root, for
// List and patterns). Errors wrap ErrBadURL and name the URL.
func Parse(raw string) (Location, error) {
	bad := func(format string, a ...any) (Location, error) {
		return Location{}, newErr("parse", urlForMsg(raw), ErrBadURL, fmt.Sprintf(format, a...))
	}
	if raw == "" {
		return bad("empty")
	}
	if !utf8.ValidString(raw) {
		return bad("not valid UTF-8")
	}
	scheme, rest, ok := splitScheme(raw)
	if !ok {
		if strings.ContainsRune(raw, 0) {
			return bad("NUL byte in path")
		}
		return Location{Scheme: SchemeFile, Key: raw}, nil
	}
	switch strings.ToLower(scheme) {
	case "file":
		host, p, _ := strings.Cut(rest, "/")
		if host != "" && host != "localhost" {
			return bad("file URLs name a local path: file:///absolute/path (host %s)", quote.Q(host))
		}
		if p == "" {
			return bad("file URL without a path")
		}
		if strings.ContainsRune(p, 0) {
			return bad("NUL byte in path")
		}
		return Location{Scheme: SchemeFile, Key: "/" + p, prefix: raw[:len(raw)-len(p)-1]}, nil
	case "s3", "gs", "azblob", "az":
	default:
		return bad("unsupported scheme %s (want s3, gs, azblob, az or file)", quote.Q(scheme))
	}
	canon := strings.ToLower(scheme)
	if canon == "az" {
		canon = SchemeAzure
	}
	bucket, key, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return bad("no bucket: want %s://bucket/key", scheme)
	}
	if err := checkBucket(canon, bucket); err != "" {
		return bad("bucket %s: %s", quote.Q(bucket), err)
	}
	if err := checkKey(canon, key); err != "" {
		return bad("key %s: %s", quote.Q(key), err)
	}
	prefix := raw[:len(raw)-len(key)]
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return Location{Scheme: canon, Bucket: bucket, Key: key, prefix: prefix}, nil
}

// urlForMsg is raw as an error message names it: as written when it is short and printable,
// else quoted, escaped and shortened (a URL may come from an input file).
func urlForMsg(raw string) string {
	if len(raw) <= quote.MaxBytes && utf8.ValidString(raw) && !strings.ContainsFunc(raw, func(r rune) bool { return r < 32 || r == 127 }) {
		return raw
	}
	return quote.Q(raw)
}

// IsURL reports whether name is a store's URL rather than a local path: true for every
// string with a scheme ("s3://", "gs://", "az://", also a malformed "s3:///x" or an unknown
// "http://") except a well-formed file:// URL, which names a local path. A string with a
// scheme is never a local path: this package's operations refuse a malformed one with
// ErrBadURL naming it, so a caller that routes a name by IsURL reports the bad URL instead of
// creating a local file of that name. Parse tells what the URL names.
//
// Deprecated: outside this package, use an operation that serves local names and URLs alike
// (FolderOf, Key, Identify, Ref, OpenCheck, StatInput, IsDir) or the capability of what is
// opened or named (ReaderAt.File, Folder.Dir, Target.Path); see docs/STORAGE.md.
func IsURL(name string) bool {
	l, err := Parse(name)
	if err != nil {
		_, _, scheme := splitScheme(name)
		return scheme
	}
	return !l.IsLocal()
}

// LocalPath returns the local path name names (a plain path as written, a file:// URL's
// path) and true, or "" and false when name is a store's URL or a malformed URL.
//
// Deprecated: outside this package, ask the capability of what is opened or named
// (ReaderAt.File, Folder.Dir, Target.Path) or use an operation that serves both; see IsURL.
func LocalPath(name string) (string, bool) {
	if IsURL(name) {
		return "", false
	}
	l, err := Parse(name)
	if err != nil {
		return "", false
	}
	return l.Key, true
}

// splitScheme splits "scheme://rest"; ok is false for a plain path.
func splitScheme(raw string) (scheme, rest string, ok bool) {
	i := strings.Index(raw, "://")
	if i <= 0 {
		return "", "", false
	}
	for j := 0; j < i; j++ {
		c := raw[j]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (j == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return "", "", false
		}
	}
	return raw[:i], raw[i+3:], true
}

// checkBucket applies the naming rules every store shares (a loose superset; the store
// has the last word).
func checkBucket(scheme, b string) string {
	if len(b) > 222 {
		return "longer than 222 characters"
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return fmt.Sprintf("character %q not allowed in a bucket name", c)
		}
	}
	return ""
}

// checkKey refuses what gocloud's drivers would rewrite (they hex-escape these characters,
// so the object written would not be the one named): control characters, a "../" segment,
// the escape marker "__0x" itself and, on Azure, `"#%`. Azure's "?" and "\" are glob
// characters in patterns: objectKey refuses them in object names.
func checkKey(scheme, k string) string {
	if len(k) > 1024 {
		return "longer than 1024 bytes"
	}
	for _, c := range k {
		if c < 32 || c == 127 {
			return fmt.Sprintf("control character %q", c)
		}
		if scheme == SchemeAzure && strings.ContainsRune(`"#%`, c) {
			return fmt.Sprintf("character %q not allowed in an Azure blob name", c)
		}
	}
	if strings.Contains(k, "__0x") {
		return `"__0x" is reserved (the storage library's escape marker)`
	}
	if strings.Contains(k, "../") {
		return `a "../" segment`
	}
	return ""
}

// IsLocal reports whether the location is a local path (plain or file://).
func (l Location) IsLocal() bool { return l.Scheme == SchemeFile }

// String returns the URL in the caller's spelling (a plain path stays a plain path).
func (l Location) String() string { return l.prefix + l.Key }

// WithKey returns the location of another key in the same bucket (for a local location,
// another path), spelled like l.
func (l Location) WithKey(key string) Location {
	l.Key = key
	return l
}

// Base returns the last element of the key, like path.Base.
func (l Location) Base() string {
	if l.IsLocal() {
		return filepath.Base(l.Key)
	}
	return path.Base(l.Key)
}

// bucketID identifies the bucket for the client's cache.
func (l Location) bucketID() string { return l.Scheme + "://" + l.Bucket }

// objectKey checks that l names an object (not a bucket root or a "directory").
func (l Location) objectKey(op string) error {
	if l.Key == "" || (!l.IsLocal() && strings.HasSuffix(l.Key, "/")) {
		return newErr(op, l.String(), ErrBadURL, "names a bucket or prefix, not an object")
	}
	if l.Scheme == SchemeAzure && strings.ContainsAny(l.Key, `?\`) {
		return newErr(op, l.String(), ErrBadURL, `"?" and "\" are not allowed in an Azure blob name`)
	}
	return nil
}
