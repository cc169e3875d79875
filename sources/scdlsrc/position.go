package scdlsrc

import (
	"fmt"

	"github.com/mldf/convert/sources"
)

// The source continues a run from a cell by the count alone (docs/RESUME.md): one sample
// per cell, and every input knows its number of cells, so the place after the first n
// samples is an input and a cell row in it. Nothing before that row is read (the inputs
// read rows by their index pointers). This serves the h5ad, 10x and scdl sources alike.
var _ sources.Resumer = (*Source)(nil)

// Resume implements sources.Resumer: a source over the cells after the first samples ones,
// sharing s's inputs (closing s closes them; the resumed source's Matrices are its inputs
// whole). The token is not needed: a non-empty one, or a count past the cells, is refused
// with sources.ErrPosition.
func (s *Source) Resume(samples int64, token []byte) (sources.Source, error) {
	if len(token) > 0 || samples < 0 {
		return nil, fmt.Errorf("%w: cell %d (cells resume by the count, token %d bytes)", sources.ErrPosition, samples, len(token))
	}
	left := samples + s.first
	for i, in := range s.inputs {
		rows, _ := in.Shape()
		if left >= rows && i < len(s.inputs)-1 {
			left -= rows
			continue
		}
		if left > rows {
			break
		}
		return &Source{inputs: s.inputs[i:], sizes: s.sizes[i:], first: left}, nil
	}
	if len(s.inputs) == 0 && samples == 0 {
		return &Source{}, nil
	}
	return nil, fmt.Errorf("%w: cell %d of %d", sources.ErrPosition, samples, s.Len())
}
