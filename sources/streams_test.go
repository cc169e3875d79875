package sources

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/mldf/convert/internal/s3test"
	"github.com/mldf/convert/objstore"
)

// TestStreamsMixed: local paths, file:// URLs and objects come out in list order with their
// bytes; a missing object is an error naming it and the inputs after it are still served;
// closing early leaves no goroutine.
func TestStreamsMixed(t *testing.T) {
	srv := s3test.Start(t)
	srv.MakeBucket(t, "bkt")
	s3test.Env(t, srv.Endpoint, s3test.SecretKey)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"), goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
	c := objstore.New()
	defer c.Close()
	ctx := context.Background()
	dir := t.TempDir()
	var names []string
	want := map[string][]byte{}
	for i := range 7 {
		data := bytes.Repeat([]byte{byte('a' + i)}, 1000*i+1)
		var name string
		switch i % 3 {
		case 0:
			name = filepath.Join(dir, "f"+string(rune('0'+i)))
			os.WriteFile(name, data, 0o644)
		case 1:
			path := filepath.Join(dir, "g"+string(rune('0'+i)))
			name = "file://" + path
			os.WriteFile(path, data, 0o644)
		default:
			name = "s3://bkt/o" + string(rune('0'+i))
			if err := c.WriteFile(ctx, name, data); err != nil {
				t.Fatal(err)
			}
		}
		names = append(names, name)
		want[name] = data
	}
	names = append(names[:4], append([]string{"s3://bkt/missing"}, names[4:]...)...)
	s := OpenStreams(ctx, c, names, 2)
	for _, n := range names {
		r, name, err := s.Next()
		if name != n {
			t.Fatalf("got %s, want %s", name, n)
		}
		if n == "s3://bkt/missing" {
			if !errors.Is(err, objstore.ErrNotFound) || !strings.Contains(err.Error(), n) {
				t.Fatalf("missing object: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(b, want[n]) {
			t.Fatalf("%s: %d bytes, %v", n, len(b), err)
		}
	}
	if _, _, err := s.Next(); err != io.EOF {
		t.Fatalf("after the last: %v", err)
	}
	s.Close()

	// Closed after one input: the prefetched ones are released.
	s = OpenStreams(ctx, c, names, 3)
	r, _, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	s.Close()

	// FetchInOrder: whole objects, errors per object.
	var got [][]byte
	var errs []error
	err = FetchInOrder(ctx, c, []string{names[2], "s3://bkt/missing", names[5]}, 2, func(i int, b []byte, err error) error {
		got = append(got, b)
		errs = append(errs, err)
		return nil
	})
	if err != nil || !bytes.Equal(got[0], want[names[2]]) || errs[1] == nil || !bytes.Equal(got[2], want[names[5]]) {
		t.Fatalf("FetchInOrder: %v, errors %v", err, errs)
	}
	c.Close()
}
