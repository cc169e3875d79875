// Command mkfixtures writes small MLDF fixture files covering every field kind, each with a
// NAME.expected.json that the Go reader exports, plus damaged files for error tests. The Python
// reader's tests (python/tests) compare every value of every sample with those JSON files.
//
// Usage:
//
//	go run ./cmd/mkfixtures -o DIR             # fixtures, expected JSON, bad files
//	go run ./cmd/mkfixtures -o DIR -bench 2000 # also bench_jpeg.mldf and bench_raw.mldf
//
// The files are built through pipeline.Run from an in-memory source, with 4 KiB pages so that
// payloads span pages. The output is deterministic.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
)

func main() {
	out := flag.String("o", "", "output directory (created if missing)")
	bench := flag.Int("bench", 0, "also write bench_jpeg.mldf and bench_raw.mldf with this many 320x240 images")
	flag.Parse()
	if *out == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: mkfixtures -o DIR [-bench N]")
		os.Exit(2)
	}
	if err := run(context.Background(), *out, *bench); err != nil {
		fmt.Fprintln(os.Stderr, "mkfixtures:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir string, bench int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var names []string
	for _, fx := range fixtures() {
		if err := fx.write(ctx, dir); err != nil {
			return fmt.Errorf("fixture %s: %w", fx.name, err)
		}
		names = append(names, fx.name)
	}
	if err := writeBad(dir); err != nil {
		return err
	}
	if err := writeChecksums(dir); err != nil {
		return err
	}
	if bench > 0 {
		if err := writeBench(ctx, dir, bench); err != nil {
			return err
		}
	}
	return writeIndex(dir, names)
}
