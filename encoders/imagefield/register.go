package imagefield

import (
	"strconv"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/internal/quote"
)

// The choices and ranges of the image field's recipe options.
var (
	// Modes are the values of mode.
	Modes = []string{"jpeg", "png", "raw", "smart"}
	// Filters are the values of filter.
	Filters = []string{"box", "area", "nearest", "linear", "bilinear", "catmullrom", "bicubic", "mitchell", "lanczos"}
	// ChannelCounts are the values of channels.
	ChannelCounts = []string{"1", "3", "4"}
)

const (
	// MaxResolutionLimit is the largest max_resolution: the metadata's limit.
	MaxResolutionLimit = 65535
	// MaxPixelsLimit is the largest max_pixels.
	MaxPixelsLimit = 1 << 30
)

var _ encoders.Field = (*Field)(nil)

func init() {
	encoders.Register(encoders.FieldSpec{
		Type: "image",
		Keys: []string{"mode", "max_resolution", "jpeg_quality", "filter", "channels", "max_pixels", "keep_png"},
		Defaults: func(o *encoders.Options) {
			o.SetDefault("mode", "jpeg")
			if o.Int("jpeg_quality") == 0 && !o.Given("jpeg_quality") {
				o.Set("jpeg_quality", int64(90))
			}
			o.SetDefault("filter", "box") // area averaging, as FFCV's cv2.INTER_AREA; cheap after DCT scaling
			o.SetDefault("channels", "3")
		},
		Check: func(_ string, o *encoders.Options, c *encoders.Checker) {
			c.OneOf("mode", o.String("mode"), Modes)
			c.OneOf("filter", o.String("filter"), Filters)
			c.OneOf("channels", o.String("channels"), ChannelCounts)
			if q := o.Int("jpeg_quality"); q < 1 || q > 100 {
				c.Add("jpeg_quality", "%s: jpeg_quality %d must be 1..100", c.Where, q)
			}
			c.In("max_resolution", o.Int("max_resolution"), 1, MaxResolutionLimit, "0 = keep")
			c.In("max_pixels", o.Int("max_pixels"), 1, MaxPixelsLimit, "0 = the default limit")
			if o.Bool("keep_png") && o.String("mode") != "smart" {
				c.Add("keep_png", "%s: keep_png needs mode smart (mode %s)", c.Where, quote.Q(o.String("mode")))
			}
		},
		New: func(name string, o *encoders.Options) (encoders.Field, error) {
			mode, err := ParseMode(o.String("mode"))
			if err != nil {
				return nil, err
			}
			filter, err := ParseFilter(o.String("filter"))
			if err != nil {
				return nil, err
			}
			ch, _ := strconv.Atoi(o.String("channels"))
			return New(name, Options{Mode: mode, MaxResolution: int(o.Int("max_resolution")),
				JPEGQuality: int(o.Int("jpeg_quality")), Filter: filter, Channels: ch, MaxPixels: o.Int("max_pixels"),
				KeepPNG: o.Bool("keep_png")})
		},
	})
}
