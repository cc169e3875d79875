package objstore

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"
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
		return Location{}, newErr("parse", raw, ErrBadURL, fmt.Sprintf(format, a...))
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
			return bad("file URLs name a local path: file:///absolute/path (host %q)", host)
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
		return bad("unsupported scheme %q (want s3, gs, azblob, az or file)", scheme)
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
		return bad("bucket %q: %s", bucket, err)
	}
	if err := checkKey(canon, key); err != "" {
		return bad("key %q: %s", key, err)
	}
	prefix := raw[:len(raw)-len(key)]
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return Location{Scheme: canon, Bucket: bucket, Key: key, prefix: prefix}, nil
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
