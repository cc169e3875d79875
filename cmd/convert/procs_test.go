package main

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/encoders/imagefield"
	"github.com/mldf/convert/encoders/textfield"
	"github.com/mldf/convert/internal/turbojpeg"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/recipe"
	"github.com/mldf/convert/runner"
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

// TestSpareProcsFromRecipes: the fields a recipe builds reach spareProcs as the encoders that
// run in C (no wrapper hides encoders.InC): the shipped image recipes get spare Ps with
// libjpeg-turbo, the text recipe never.
func TestSpareProcsFromRecipes(t *testing.T) {
	for _, c := range []struct {
		config string
		inC    bool // with libjpeg-turbo
	}{
		{"demo-images.yaml", true},
		{"imagenet.yaml", true},
		{"jsonl-corpus.yaml", false},
	} {
		t.Run(c.config, func(t *testing.T) {
			r, err := recipe.Load(filepath.Join(repoRoot(t), "configs", c.config))
			if err != nil {
				t.Fatal(err)
			}
			r.Defaults()
			client := objstore.New()
			defer client.Close()
			plan, err := recipe.BuildWith(context.Background(), r, client)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := runner.Config(plan, r.Output)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := fieldsInC(cfg.Fields), c.inC && turbojpeg.Available(); got != want {
				t.Errorf("fields in C: %v, want %v", got, want)
			}
		})
	}
}
