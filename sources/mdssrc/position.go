package mdssrc

import (
	"fmt"

	"github.com/mldf/convert/sources"
)

// The source continues a run from a sample by the count alone (docs/RESUME.md): the index
// says how many samples each shard holds, so the place after the first n is a shard and a
// sample in it. The shards before it are not opened; in it, the samples before the place are
// not read (a shard is read by offsets).
var _ sources.Resumer = (*Source)(nil)

// Resume implements sources.Resumer: a source over the samples after the first samples ones.
// The token is not needed (a non-empty one, or a count past the index's samples, is refused
// with sources.ErrPosition).
func (s *Source) Resume(samples int64, token []byte) (sources.Source, error) {
	if len(token) > 0 || samples < 0 || samples > s.ix.Samples {
		return nil, fmt.Errorf("%w: sample %d of %d (mds resumes by the count, token %d bytes)", sources.ErrPosition, samples, s.ix.Samples, len(token))
	}
	left := samples + int64(s.first)
	if len(s.ix.Shards) == 0 {
		r := *s
		return &r, nil
	}
	for i, sh := range s.ix.Shards {
		if left >= sh.Samples && i < len(s.ix.Shards)-1 {
			left -= sh.Samples
			continue
		}
		if left > sh.Samples {
			break
		}
		ix := *s.ix
		ix.Shards = s.ix.Shards[i:]
		ix.Samples = s.ix.Samples - samples
		r := *s
		r.ix, r.first = &ix, int(left)
		return &r, nil
	}
	return nil, fmt.Errorf("%w: sample %d of %d", sources.ErrPosition, samples, s.ix.Samples)
}
