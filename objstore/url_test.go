package objstore

import (
	"errors"
	"strings"
	"testing"
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
		if bad != "" && bad != "s3://b/\xff" && !strings.Contains(err.Error(), strings.Split(bad, "\n")[0]) {
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
