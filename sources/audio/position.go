package audio

import (
	"fmt"

	"github.com/mldf/convert/sources"
)

// The audio sources continue a run from a sample by the count alone (docs/RESUME.md): each
// lists one record per sample before the run (a folder's clips, a manifest's lines, in
// order), so the place after the first n samples is the listing from record n; no clip or
// line before it is read again. A manifest's samples keep their line numbers (keys,
// origins), a folder's its labels and classes.
var (
	_ sources.Resumer = (*Folder)(nil)
	_ sources.Resumer = (*LibriSpeech)(nil)
	_ sources.Resumer = (*Manifest)(nil)
)

// resume returns l from its record samples on. The resumed list is for Run (its Inputs
// count those of the whole list); it keeps l's counts of skipped files.
func (l *list) resume(samples int64, token []byte) (list, error) {
	if len(token) > 0 || samples < 0 || samples > l.Len() {
		return list{}, fmt.Errorf("%w: sample %d of %d (audio sources resume by the count, token %d bytes)", sources.ErrPosition, samples, l.Len(), len(token))
	}
	items, err := l.items.Slice(samples, l.Len())
	if err != nil {
		return list{}, err
	}
	r := list{items: items, errs: l.errs, inputs: l.inputs, decoder: l.decoder,
		remote: l.remote, store: l.store, prefetch: l.prefetch, skipped: l.skipped}
	return r, nil
}

// Resume implements sources.Resumer: the clips after the first samples ones.
func (f *Folder) Resume(samples int64, token []byte) (sources.Source, error) {
	l, err := f.resume(samples, token)
	if err != nil {
		return nil, err
	}
	return &Folder{list: l, classes: f.classes}, nil
}

// Resume implements sources.Resumer: the clips after the first samples ones.
func (ls *LibriSpeech) Resume(samples int64, token []byte) (sources.Source, error) {
	l, err := ls.resume(samples, token)
	if err != nil {
		return nil, err
	}
	return &LibriSpeech{list: l}, nil
}

// Resume implements sources.Resumer: the lines after the first samples ones (a line per
// sample, the lines that are errors included).
func (m *Manifest) Resume(samples int64, token []byte) (sources.Source, error) {
	l, err := m.resume(samples, token)
	if err != nil {
		return nil, err
	}
	r := *m
	r.list = l
	return &r, nil
}
