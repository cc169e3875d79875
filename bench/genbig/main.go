// Command genbig writes large photos for bench/bigphotos.sh: one folder per size and format,
// each an ImageFolder (a class folder "c" holding N copies of one image), made with
// internal/synthimage in milliseconds.
//
//	go run ./bench/genbig -out DIR [-n 4]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mldf/convert/internal/synthimage"
)

func main() {
	out := flag.String("out", "", "output directory")
	n := flag.Int("n", 4, "copies of each image")
	flag.Parse()
	if *out == "" {
		log.Fatal("genbig: -out is required")
	}
	sizes := []struct {
		name string
		w, h int
	}{{"24MP", 6000, 4000}, {"48MP", 8000, 6000}, {"100MP", 11552, 8672}}
	for _, s := range sizes {
		for _, format := range []string{"jpeg", "png"} {
			var data []byte
			var err error
			if format == "jpeg" {
				data, err = synthimage.JPEG(s.w, s.h, true)
			} else {
				data, err = synthimage.PNG(s.w, s.h, true)
			}
			if err != nil {
				log.Fatal(err)
			}
			dir := filepath.Join(*out, s.name+"-"+format, "c")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				log.Fatal(err)
			}
			for i := range *n {
				name := filepath.Join(dir, fmt.Sprintf("%03d.%s", i, map[string]string{"jpeg": "jpg", "png": "png"}[format]))
				if err := os.WriteFile(name, data, 0o644); err != nil {
					log.Fatal(err)
				}
			}
		}
	}
}
