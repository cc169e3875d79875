package main

import (
	"runtime"
	"testing"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/encoders/imagefield"
	"github.com/mldf/convert/encoders/textfield"
	"github.com/mldf/convert/internal/turbojpeg"
	"github.com/mldf/convert/pipeline"
)

// TestSpareProcs checks who gets spare Ps: fields that run in C (the image field with
// libjpeg-turbo, except png mode) get workers+2 for the run and the old value back after it;
// Go-only fields, and any run under a GOMAXPROCS from the environment, keep the default.
func TestSpareProcs(t *testing.T) {
	t.Setenv("GOMAXPROCS", "") // unset for the run (the case that sets it sets it again)
	image := func(m imagefield.Mode) encoders.Field {
		f, err := imagefield.New("image", imagefield.Options{Mode: m, MaxResolution: 256})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	text, err := textfield.NewRaw("text")
	if err != nil {
		t.Fatal(err)
	}
	label, err := encoders.NewInt("label")
	if err != nil {
		t.Fatal(err)
	}
	inC := turbojpeg.Available()
	cases := []struct {
		name    string
		fields  []encoders.Field
		workers int
		env     string
		raise   bool // when built with libjpeg-turbo
	}{
		{"jpeg and a label", []encoders.Field{image(imagefield.ModeJPEG), label}, 2, "", true},
		{"smart", []encoders.Field{image(imagefield.ModeSmart)}, 3, "", true},
		{"raw", []encoders.Field{image(imagefield.ModeRaw)}, 1, "", true},
		{"default workers", []encoders.Field{image(imagefield.ModeJPEG)}, 0, "", true},
		{"png: Go's encoder", []encoders.Field{image(imagefield.ModePNG)}, 2, "", false},
		{"text", []encoders.Field{text, label}, 2, "", false},
		{"GOMAXPROCS set", []encoders.Field{image(imagefield.ModeJPEG)}, 2, "2", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv("GOMAXPROCS", c.env)
			}
			before := runtime.GOMAXPROCS(0)
			cfg := pipeline.Config{Workers: c.workers}
			for _, f := range c.fields {
				cfg.Fields = append(cfg.Fields, pipeline.Binding{Field: f})
			}
			restore := spareProcs(cfg)
			during := runtime.GOMAXPROCS(0)
			restore()
			if after := runtime.GOMAXPROCS(0); after != before {
				t.Errorf("GOMAXPROCS %d after the run, want %d back", after, before)
			}
			want := before
			if c.raise && inC {
				w := c.workers
				if w == 0 {
					w = runtime.NumCPU()
				}
				want = max(before, w+2)
			}
			if during != want {
				t.Errorf("GOMAXPROCS %d during the run, want %d (before %d, in C %v)", during, want, before, inC)
			}
		})
	}
}
