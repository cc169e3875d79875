package imagefolder

import (
	"fmt"

	"github.com/mldf/convert/sources"
)

var _ sources.Resumer = (*Source)(nil)

// Resume implements sources.Resumer: one sample per listed file, so the place after the
// first samples ones is the listing from that index; the token is not needed. The resumed
// source keeps s's classes and its counts of skipped files.
func (s *Source) Resume(samples int64, _ []byte) (sources.Source, error) {
	if samples < 0 || samples > s.Len() {
		return nil, fmt.Errorf("%w: sample %d of %d", sources.ErrPosition, samples, s.Len())
	}
	files, err := s.files.Slice(samples, s.Len())
	if err != nil {
		return nil, err
	}
	r := *s
	r.files = files
	return &r, nil
}
