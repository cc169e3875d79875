package objstore

import (
	"errors"
	"testing"
)

func TestKey(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"a/./b", "a/b"},
		{"file:///x/y", "/x/y"},
		{"file://localhost/x/y", "/x//y"},
		{"az://c/k", "azblob://c/k"},
		{"s3://b/k", "s3://b/k"},
	} {
		ka, erra := Key(tc.a)
		kb, errb := Key(tc.b)
		if erra != nil || errb != nil || ka != kb {
			t.Errorf("Key(%q) = %q, %v; Key(%q) = %q, %v", tc.a, ka, erra, tc.b, kb, errb)
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"s3://b/k", "gs://b/k"},
		{"s3://b/k", "s3://c/k"},
		{"s3://b/a//k", "s3://b/a/k"}, // keys are literal
		{"./s3:/b/k", "s3://b/k"},     // a local path is never an object
	} {
		ka, _ := Key(tc.a)
		kb, _ := Key(tc.b)
		if ka == kb {
			t.Errorf("Key(%q) = Key(%q) = %q", tc.a, tc.b, ka)
		}
	}
	for _, bad := range []string{"s3:///x", "http://h/x", "s3://b/a/../x"} {
		if _, err := Key(bad); !errors.Is(err, ErrBadURL) {
			t.Errorf("Key(%q): %v, want ErrBadURL", bad, err)
		}
		if _, err := Identify(bad); !errors.Is(err, ErrBadURL) {
			t.Errorf("Identify(%q): %v, want ErrBadURL", bad, err)
		}
		if _, ok := FolderOf(bad).Dir(); ok {
			t.Errorf("FolderOf(%q) is local", bad)
		}
		if _, ok := TargetOf(bad).Path(); ok {
			t.Errorf("TargetOf(%q) is local", bad)
		}
	}
}

func TestRef(t *testing.T) {
	for _, tc := range []struct {
		dir, ref, want string
		err            error
	}{
		// A local folder: relative names joined, absolute and URLs as they are.
		{"/d/m", "a.wav", "/d/m/a.wav", nil},
		{"/d/m", "../a.wav", "/d/a.wav", nil},
		{"/d/m", "/abs/a.wav", "/abs/a.wav", nil},
		{"/d/m", "file:///abs/a.wav", "/abs/a.wav", nil},
		{"/d/m", "s3://b/a.wav", "s3://b/a.wav", nil},
		{"/d/m", "s3:///a.wav", "", ErrBadURL},
		{"file:///d/m", "a.wav", "/d/m/a.wav", nil},
		// A folder in a bucket: only its bucket.
		{"s3://b/m", "a.wav", "s3://b/m/a.wav", nil},
		{"s3://b/m", "x/../a.wav", "s3://b/m/a.wav", nil},
		{"s3://b/m", "../a.wav", "s3://b/a.wav", nil},
		{"s3://b/m", "s3://b/z/a.wav", "s3://b/z/a.wav", nil},
		{"s3://b/m", "../../a.wav", "", ErrEscapes},
		{"s3://b/m", "/etc/passwd", "", ErrOutsideBucket},
		{"s3://b/m", "file:///etc/passwd", "", ErrOutsideBucket},
		{"s3://b/m", "s3://other/a.wav", "", ErrOutsideBucket},
		{"s3://b/m", "gs://b/a.wav", "", ErrOutsideBucket},
		{"s3://b/m", "http://h/a.wav", "", ErrOutsideBucket},
	} {
		got, err := Ref(tc.dir, tc.ref)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("Ref(%q, %q) = %q, %v, want %v", tc.dir, tc.ref, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Ref(%q, %q) = %q, %v, want %q", tc.dir, tc.ref, got, err, tc.want)
		}
	}
}

func TestDirOfName(t *testing.T) {
	for name, want := range map[string]string{
		"/d/m.json":          "/d",
		"m.json":             ".",
		"file:///d/m.json":   "/d",
		"s3://b/d/m.json":    "s3://b/d",
		"s3://b/m.json":      "s3://b",
		"az://c/x/y/m.jsonl": "az://c/x/y",
	} {
		if got := Dir(name); got != want {
			t.Errorf("Dir(%q) = %q, want %q", name, got, want)
		}
	}
}
