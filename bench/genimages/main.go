// Command genimages writes a deterministic ImageFolder of photo-like JPEGs for benchmarks:
// root/class_NN/img_NNNNNN.jpg, smooth gradients with shapes and noise, encoded by Go's
// image/jpeg so the bytes are the same on every machine and build.
//
// Usage:
//
//	go run ./bench/genimages -out /tmp/imgs -n 2000 -classes 10 -width 500 -height 375 -quality 90
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sync/errgroup"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.out, "out", "", "output folder (created; must be empty or absent)")
	flag.IntVar(&cfg.n, "n", 2000, "number of images")
	flag.IntVar(&cfg.classes, "classes", 10, "number of class folders")
	flag.IntVar(&cfg.width, "width", 500, "image width")
	flag.IntVar(&cfg.height, "height", 375, "image height")
	flag.IntVar(&cfg.quality, "quality", 90, "JPEG quality")
	flag.Uint64Var(&cfg.seed, "seed", 1, "random seed")
	flag.Parse()
	if err := run(context.Background(), cfg); err != nil {
		fmt.Fprintln(os.Stderr, "genimages:", err)
		os.Exit(1)
	}
}

type config struct {
	out                    string
	n, classes             int
	width, height, quality int
	seed                   uint64
}

func run(ctx context.Context, c config) error {
	switch {
	case c.out == "":
		return errors.New("-out is required")
	case c.n < 1 || c.classes < 1 || c.width < 1 || c.height < 1 || c.quality < 1 || c.quality > 100:
		return fmt.Errorf("invalid sizes: n %d classes %d size %dx%d (HxW) quality %d", c.n, c.classes, c.height, c.width, c.quality)
	}
	if entries, err := os.ReadDir(c.out); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty", c.out)
	}
	for k := 0; k < c.classes; k++ {
		if err := os.MkdirAll(filepath.Join(c.out, fmt.Sprintf("class_%02d", k)), 0o755); err != nil {
			return err
		}
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := 0; i < c.n; i++ {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			p := filepath.Join(c.out, fmt.Sprintf("class_%02d", i%c.classes), fmt.Sprintf("img_%06d.jpg", i))
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			if err := jpeg.Encode(f, Picture(c.width, c.height, c.seed, uint64(i)), &jpeg.Options{Quality: c.quality}); err != nil {
				f.Close()
				return fmt.Errorf("%s: %w", p, err)
			}
			return f.Close()
		})
	}
	return g.Wait()
}

// Picture returns image i of the set: a two-colour gradient sky, a few discs and rectangles
// with soft edges, a sinusoidal texture and per-pixel noise.
func Picture(w, h int, seed, i uint64) *image.RGBA {
	r := rand.New(rand.NewPCG(seed, i))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	c0 := [3]float64{r.Float64() * 255, r.Float64() * 255, r.Float64() * 255}
	c1 := [3]float64{r.Float64() * 255, r.Float64() * 255, r.Float64() * 255}
	type shape struct {
		disc       bool
		x, y, a, b float64
		col        [3]float64
	}
	shapes := make([]shape, 3+r.IntN(5))
	for k := range shapes {
		shapes[k] = shape{disc: r.IntN(2) == 0, x: r.Float64() * float64(w), y: r.Float64() * float64(h),
			a: 10 + r.Float64()*float64(w)/4, b: 10 + r.Float64()*float64(h)/4,
			col: [3]float64{r.Float64() * 255, r.Float64() * 255, r.Float64() * 255}}
	}
	fx, fy, amp := 0.02+r.Float64()*0.2, 0.02+r.Float64()*0.2, 5+r.Float64()*20
	noise := 4 + r.Float64()*10
	for y := 0; y < h; y++ {
		t := float64(y) / float64(h)
		for x := 0; x < w; x++ {
			var px [3]float64
			for ch := range px {
				px[ch] = c0[ch]*(1-t) + c1[ch]*t
			}
			tex := amp * math.Sin(float64(x)*fx) * math.Cos(float64(y)*fy)
			for _, s := range shapes {
				var d float64 // signed distance-like value, < 0 inside
				if s.disc {
					dx, dy := (float64(x)-s.x)/s.a, (float64(y)-s.y)/s.a
					d = (math.Sqrt(dx*dx+dy*dy) - 1) * s.a
				} else {
					d = math.Max(math.Abs(float64(x)-s.x)-s.a, math.Abs(float64(y)-s.y)-s.b)
				}
				if a := math.Min(1, math.Max(0, 0.5-d/2)); a > 0 {
					for ch := range px {
						px[ch] = px[ch]*(1-a) + s.col[ch]*a
					}
				}
			}
			n := r.NormFloat64() * noise
			var out [3]uint8
			for ch := range px {
				out[ch] = uint8(math.Min(255, math.Max(0, px[ch]+tex+n)))
			}
			img.SetRGBA(x, y, color.RGBA{out[0], out[1], out[2], 255})
		}
	}
	return img
}
