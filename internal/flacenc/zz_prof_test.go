package flacenc

import "testing"

// BenchmarkEncodeProfile: encode only (signals generated once), for profiles.
func BenchmarkEncodeProfile(b *testing.B) {
	for _, bc := range benchCases {
		s, info := bc.gen()
		b.Run(bc.name, func(b *testing.B) {
			dst := make([]byte, 0, len(s)*2)
			for b.Loop() {
				dst, _ = Append(dst[:0], s, info, Options{})
			}
		})
	}
}
