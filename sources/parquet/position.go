package parquet

import (
	"fmt"

	"github.com/mldf/convert/sources"
)

// The source continues a run from a row (docs/RESUME.md) by the count of samples alone: one
// sample per row, and the footers say how many rows each file and row group holds, so the
// place after the first n samples is a file, a row group and a row in it. The row groups
// before it are not read (their pages not even fetched); the rows of its row group before
// the row are read and dropped.
var _ sources.Resumer = (*Source)(nil)

// start is where a resumed source starts in its first input: the row group, the row number
// (within the file) of that group's first row, and the rows of the group to drop.
type start struct {
	group    int
	groupRow int64
	skip     int64
}

// Resume implements sources.Resumer: a source over the rows after the first samples ones.
// The place needs no token (a non-empty one is refused with sources.ErrPosition, as is a
// count beyond the rows the footers declare); the footer of the file it falls in is read
// again to find its row group.
func (s *Source) Resume(samples int64, token []byte) (sources.Source, error) {
	if len(token) > 0 {
		return nil, fmt.Errorf("%w: parquet resumes by the sample count, not a token", sources.ErrPosition)
	}
	if samples < 0 {
		return nil, fmt.Errorf("%w: sample %d", sources.ErrPosition, samples)
	}
	left := samples
	if s.start.skip > 0 || s.start.group > 0 {
		left += s.start.groupRow + s.start.skip // a resumed source resumed again: count from its file's start
	}
	for i, n := range s.fileRows {
		if left >= n {
			left -= n
			continue
		}
		st, err := s.place(i, left)
		if err != nil {
			return nil, err
		}
		r := *s
		r.inputs, r.groups, r.fileRows, r.start = s.inputs[i:], s.groups[i:], s.fileRows[i:], st
		if s.rows >= 0 {
			r.rows = s.rows - samples
		}
		return &r, nil
	}
	if left > 0 {
		return nil, fmt.Errorf("%w: sample %d of %d", sources.ErrPosition, samples, samples-left)
	}
	r := *s
	r.inputs, r.groups, r.fileRows, r.start, r.rows = nil, nil, nil, start{}, 0
	return &r, nil
}

// place finds row row of input i: its row group, reading the file's footer.
func (s *Source) place(i int, row int64) (start, error) {
	f, err := openFile(s.opt.Open, s.inputs[i].Path)
	if err != nil {
		return start{}, err
	}
	defer f.close()
	var first int64
	for g := range f.pqf.NumRowGroups() {
		n := f.pqf.RowGroupRows(g)
		if row < first+n {
			return start{group: g, groupRow: first, skip: row - first}, nil
		}
		first += n
	}
	return start{}, fmt.Errorf("%w: %s holds %d rows now, %d when the run started", sources.ErrPosition, s.inputs[i].Path, first, s.fileRows[i])
}
