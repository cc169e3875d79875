package main

import (
	"context"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunChecks: bad settings are refused with a message that gives the size height first,
// as everywhere else (HxW); good ones write n JPEGs of that size.
func TestRunChecks(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  config
		want string
	}{
		{"no output", config{n: 1, classes: 1, width: 4, height: 3, quality: 90}, "-out is required"},
		{"zero width", config{out: "x", n: 1, classes: 1, width: 0, height: 3, quality: 90}, "size 3x0 (HxW)"},
		{"bad quality", config{out: "x", n: 1, classes: 1, width: 5, height: 3, quality: 101}, "size 3x5 (HxW) quality 101"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := run(context.Background(), c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
	out := t.TempDir()
	if err := run(context.Background(), config{out: out, n: 3, classes: 2, width: 7, height: 5, quality: 80, seed: 1}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out, "class_01", "img_000001.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := jpeg.DecodeConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Height != 5 || cfg.Width != 7 {
		t.Fatalf("image %dx%d (HxW), want 5x7", cfg.Height, cfg.Width)
	}
}
