package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mldf/convert/internal/hdf5"
	"github.com/mldf/convert/internal/turbojpeg"
	"github.com/mldf/convert/objstore"
)

// convert version names the version, the commit and date, and says which codecs and stores
// this build has: the JPEG line and the h5ad line follow cgo, the storage line the tags.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errb bytes.Buffer
		if err := dispatch(context.Background(), args, &out, &errb); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		s := out.String()
		want := []string{"convert " + version + "\n", "\ncommit:   ", "\nbuilt:    ", "\ngo:       ", "\nalways:   "}
		if turbojpeg.Available() {
			want = append(want, "jpeg:     libjpeg-turbo (cgo)")
		} else {
			want = append(want, "jpeg:     pure Go (image/jpeg)")
		}
		if hdf5.Available() {
			want = append(want, "h5ad:     libhdf5 (cgo)")
		} else {
			want = append(want, "h5ad:     not in this build")
		}
		for _, b := range objstore.Backends() {
			name := b.Scheme
			if name == objstore.SchemeAzure {
				name = "az"
			}
			if b.Built {
				want = append(want, name+"://")
			} else {
				want = append(want, name+":// (-tags "+b.Tag+")")
			}
		}
		for _, w := range want {
			if !strings.Contains(s, w) {
				t.Errorf("%v: output lacks %q:\n%s", args, w, s)
			}
		}
		if errb.Len() != 0 {
			t.Errorf("%v: stderr %q", args, errb.String())
		}
	}
}

func TestVersionArgs(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		usage bool
	}{
		{[]string{"version", "--help"}, false},
		{[]string{"version", "-h"}, false},
		{[]string{"version", "extra"}, true},
		{[]string{"version", "--json\x1b"}, true},
	} {
		var out, errb bytes.Buffer
		err := dispatch(context.Background(), tc.args, &out, &errb)
		if tc.usage != errors.Is(err, errUsage) {
			t.Errorf("%q: error %v, want usage error %v", tc.args, err, tc.usage)
		}
		if err != nil && strings.ContainsRune(err.Error(), 0x1b) {
			t.Errorf("%q: error carries an unescaped control byte: %q", tc.args, err)
		}
		if !tc.usage && !strings.Contains(out.String(), "Usage: convert version") {
			t.Errorf("%q: help %q", tc.args, out.String())
		}
	}
}
