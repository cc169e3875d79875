package audiofield

import (
	"github.com/mldf/convert/encoders"
)

// The choices and ranges of the audio fields' recipe options.
var (
	// SampleTypes are the values of sample_type.
	SampleTypes = []string{"int16", "int32", "float32"}
	// ChannelModes are the values of channels.
	ChannelModes = []string{"mono", "keep"}
	// OnLong are the values of on_long.
	OnLong = []string{"truncate", "skip"}
)

// MaxDurationLimit is the largest max_duration, in seconds: a day.
const MaxDurationLimit = 86400

var _ encoders.Field = (*Field)(nil)

func init() {
	for _, typ := range []string{"audio", "flac"} {
		keys := []string{"sample_rate", "channels", "sample_type", "max_duration", "on_long"}
		if typ == "flac" {
			keys = []string{"sample_rate", "channels", "max_duration", "on_long"}
		}
		encoders.Register(encoders.FieldSpec{
			Type: typ,
			Keys: keys,
			Defaults: func(o *encoders.Options) {
				o.SetDefault("channels", "keep")
				if typ == "audio" {
					o.SetDefault("sample_type", "int16")
				}
				o.SetDefault("on_long", "truncate")
			},
			Check: func(_ string, o *encoders.Options, c *encoders.Checker) {
				c.OneOf("channels", o.String("channels"), ChannelModes)
				c.In("sample_rate", o.Int("sample_rate"), 1, MaxSampleRate, "0 = keep the input's rate")
				if typ == "audio" {
					c.OneOf("sample_type", o.String("sample_type"), SampleTypes)
				}
				if d := o.Float("max_duration"); !(d >= 0 && d <= MaxDurationLimit) { // NaN fails both
					c.Add("max_duration", "%s: max_duration %v is out of range: 0 (no limit) or up to %d seconds", c.Where, d, MaxDurationLimit)
				}
				c.OneOf("on_long", o.String("on_long"), OnLong)
			},
			New: func(name string, o *encoders.Options) (encoders.Field, error) {
				opt := Options{SampleRate: int(o.Int("sample_rate")), Mono: o.String("channels") == "mono",
					MaxDuration: o.Float("max_duration"), SkipLong: o.String("on_long") == "skip"}
				if typ == "flac" {
					return NewCompressed(name, opt)
				}
				switch o.String("sample_type") {
				case "int32":
					opt.Format = Int32
				case "float32":
					opt.Format = Float32
				default:
					opt.Format = Int16
				}
				return NewWaveform(name, opt)
			},
		})
	}
}
