package objstore

import (
	"errors"
	"strings"
	"testing"

	"github.com/mldf/convert/internal/quote"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in                  string
		scheme, bucket, key string
		str                 string
	}{
		{"s3://bkt/a/b.tar", SchemeS3, "bkt", "a/b.tar", ""},
		{"S3://bkt/a", SchemeS3, "bkt", "a", ""},
		{"s3://bkt", SchemeS3, "bkt", "", "s3://bkt/"},
		{"s3://bkt/", SchemeS3, "bkt", "", ""},
		{"gs://my_bucket.x/k?v#f", SchemeGCS, "my_bucket.x", "k?v#f", ""},
		{"az://cont/dir/x.mldf", SchemeAzure, "cont", "dir/x.mldf", ""},
		{"azblob://cont/x", SchemeAzure, "cont", "x", ""},
		{"file:///data/x.tar", SchemeFile, "", "/data/x.tar", ""},
		{"file://localhost/data/x", SchemeFile, "", "/data/x", ""},
		{"data/x.tar", SchemeFile, "", "data/x.tar", ""},
		{"/abs/x:y", SchemeFile, "", "/abs/x:y", ""},
		{"./a://b", SchemeFile, "", "./a://b", ""},
		{"s3://b/a%20b", SchemeS3, "b", "a%20b", ""},
	} {
		l, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if l.Scheme != tc.scheme || l.Bucket != tc.bucket || l.Key != tc.key {
			t.Errorf("Parse(%q) = %+v", tc.in, l)
		}
		want := tc.str
		if want == "" {
			want = tc.in
		}
		if l.String() != want {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.in, l.String(), want)
		}
	}
	for _, bad := range []string{"", "http://x/y", "s3://", "s3:///key", "s3://b*d/k", "file://host/x", "file://",
		"s3://b/a\nb", "az://c/a%b", "s3://b/../x", "s3://b/a__0x41__", "s3://b/\xff", "x\x00y"} {
		_, err := Parse(bad)
		if !errors.Is(err, ErrBadURL) {
			t.Errorf("Parse(%q) = %v, want ErrBadURL", bad, err)
			continue
		}
		if bad != "" && !strings.Contains(err.Error(), strings.Split(bad, "\n")[0]) && !strings.Contains(err.Error(), quote.Q(bad)) {
			t.Errorf("Parse(%q): error does not name the URL: %v", bad, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"s3://b/k", "gs://b/", "az://c/x", "file:///x", "rel/path", "s3://", "x://y/z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Parse(s)
		// IsURL and LocalPath agree with Parse: a local path is one Parse takes as local, and
		// a string with a scheme is never one.
		if p, ok := LocalPath(s); ok && (IsURL(s) || err != nil || !l.IsLocal() || p != l.Key) || !ok && err == nil && l.IsLocal() {
			t.Fatalf("%q: IsURL %v, LocalPath %q %v, Parse %+v %v", s, IsURL(s), p, ok, l, err)
		}
		if _, _, scheme := splitScheme(s); scheme && !IsURL(s) && (err != nil || !l.IsLocal()) {
			t.Fatalf("%q: a scheme, not a URL, yet not a local file URL", s)
		}
		if err != nil {
			if !errors.Is(err, ErrBadURL) {
				t.Fatalf("Parse(%q): error not ErrBadURL: %v", s, err)
			}
			return
		}
		// Parsing what String returns gives the same location.
		l2, err := Parse(l.String())
		if err != nil || l2 != l {
			t.Fatalf("Parse(%q) = %+v; reparsed %q = %+v, %v", s, l, l.String(), l2, err)
		}
	})
}

// A malformed URL's error quotes it escaped and shortened: a URL may come from an input.
func TestParseErrorBounded(t *testing.T) {
	for _, bad := range []string{"s3://b/" + strings.Repeat("k", 100_000), "s3://" + strings.Repeat("b", 100_000) + "/k",
		"s3://b/\x1b[2Jx", "x" + strings.Repeat("y", 10_000) + "://z", "file://" + strings.Repeat("h", 10_000) + "/x"} {
		_, err := Parse(bad)
		if !errors.Is(err, ErrBadURL) {
			t.Fatalf("Parse: %v", err)
		}
		if msg := err.Error(); len(msg) > 3*quote.MaxBytes || strings.ContainsRune(msg, 0x1b) {
			t.Errorf("error of %d bytes: %.300q", len(msg), msg)
		}
	}
}

// IsURL: a string with a scheme is never a local path, malformed or not; file:// URLs and
// plain paths are local.
func TestIsURL(t *testing.T) {
	for _, tc := range []struct {
		in    string
		url   bool
		local string
	}{
		{"s3://b/k", true, ""},
		{"az://c/k", true, ""},
		{"s3:///x", true, ""},
		{"s3://bkt/a/../x.mldf", true, ""},
		{"s3://bkt/a__0x41", true, ""},
		{"s3://bkt/" + strings.Repeat("k", 1025), true, ""},
		{"http://host/x", true, ""},
		{"file://host/x", true, ""},
		{"s3://b/\xff", true, ""},
		{"file:///data/x", false, "/data/x"},
		{"data/x.mldf", false, "data/x.mldf"},
		{"./s3:/bkt/x", false, "./s3:/bkt/x"},
		{"/abs/x:y", false, "/abs/x:y"},
	} {
		if got := IsURL(tc.in); got != tc.url {
			t.Errorf("IsURL(%.40q) = %v", tc.in, got)
		}
		p, ok := LocalPath(tc.in)
		if ok == tc.url || p != tc.local {
			t.Errorf("LocalPath(%.40q) = %q, %v", tc.in, p, ok)
		}
	}
}
