package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"math/rand/v2"
	"path/filepath"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/encoders/imagefield"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/sample"
)

func randFor(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// writeBench writes bench_jpeg.mldf (IMAGE_JPEG, smart mode: the generated JPEGs stored as
// they are) and bench_raw.mldf (IMAGE_RAW) with n 320×240 images and an INT label, default
// page size.
func writeBench(ctx context.Context, dir string, n int) error {
	rng := randFor(11)
	ss := make([]sample.Sample, n)
	for i := range ss {
		var b bytes.Buffer
		if err := jpeg.Encode(&b, testImage(rng, 320, 240, false), &jpeg.Options{Quality: 90}); err != nil {
			return err
		}
		ss[i] = mk(i, map[string]sample.Value{
			"img":   {Kind: sample.KindBytes, Bytes: b.Bytes(), Name: fmt.Sprintf("%06d.jpg", i)},
			"label": {Kind: sample.KindInt, Int: int64(i % 1000)},
		})
	}
	for _, m := range []struct {
		name string
		mode imagefield.Mode
	}{{"bench_jpeg", imagefield.ModeSmart}, {"bench_raw", imagefield.ModeRaw}} {
		img, err := imagefield.New("image", imagefield.Options{Mode: m.mode})
		if err != nil {
			return err
		}
		lab, err := encoders.NewInt("label")
		if err != nil {
			return err
		}
		_, err = pipeline.Run(ctx, pipeline.Config{
			Source: memSource(ss), Output: filepath.Join(dir, m.name+".mldf"), Checksums: true, OnError: pipeline.Fail,
			Fields: []pipeline.Binding{{Field: img, Column: "img"}, {Field: lab, Column: "label"}},
		})
		if err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
	}
	return nil
}

// writeIndex writes index.json: the good fixtures' names.
func writeIndex(dir string, names []string) error {
	b, err := json.MarshalIndent(map[string]any{"fixtures": append(names, "bigraw", "ok_newer_minor")}, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "index.json"), b)
}
