package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/dedup"
	"github.com/mldf/convert/internal/quote"
)

// DedupMode says what a duplicate does.
type DedupMode int

// Dedup modes.
const (
	DedupDrop   DedupMode = iota // leave the duplicate out (the default)
	DedupReport                  // write it, and list it in the report and the rejects file
)

// String returns "drop" or "report".
func (m DedupMode) String() string {
	if m == DedupReport {
		return "report"
	}
	return "drop"
}

// ParseDedupMode parses "drop" or "report" ("" is drop).
func ParseDedupMode(s string) (DedupMode, error) {
	switch s {
	case "", "drop":
		return DedupDrop, nil
	case "report":
		return DedupReport, nil
	}
	return DedupDrop, fmt.Errorf("%w: dedup mode %q (want drop or report)", ErrConfig, s)
}

// ErrDuplicate is the error of a duplicate sample (a *DuplicateError) in the rejects file.
var ErrDuplicate = errors.New("duplicate")

// DuplicateError says which sample a duplicate duplicates: the first one written with the
// same payloads, by its origin (its input file, as the source names it) and its index, the
// sample id it has in the output (for a sample of an append's base: the base file and its
// sample id).
type DuplicateError struct{ First dedup.First }

func (e *DuplicateError) Error() string {
	return "duplicate of sample " + strconv.FormatInt(e.First.Index, 10) + " (" + quote.S(e.First.Origin) + ")"
}

// Unwrap returns ErrDuplicate.
func (e *DuplicateError) Unwrap() error { return ErrDuplicate }

// Dedup configures the dedup stage. A sample is a duplicate when the payloads it stores in
// Fields are byte-identical, field by field, to those of a sample written before it (earlier
// in the run, or in the table's seed). The payload compared is the encoded one, the bytes
// the output stores: the encoders are deterministic, so byte-identical source bytes always
// give identical payloads, and it is what an append's base holds (SeedDedup). A field that
// stores its value in the row (an int, a label) compares that value. A sample whose
// payloads in Fields are all empty (an optional field the sample lacks) is never a
// duplicate. The decision is made in sample order, as each chunk claims its place in the
// output, so the output does not depend on the worker count; only written samples count
// (the duplicate of a rejected sample is not one).
type Dedup struct {
	// Fields are output field names (Binding.Field.Name()).
	Fields []string
	Mode   DedupMode
	// Table, when set, is the table to use (seeded with an append's base by SeedDedup); the
	// caller closes it. Otherwise Run creates one in Dir and closes it.
	Table *dedup.Table
	// Dir holds the table's temporary files; "" means os.TempDir(). A resumable run
	// (Config.Resume) keeps them beside the output instead, checkpointed with it.
	Dir string
	// Memory caps the table's memory (bytes); 0 means dedup.DefaultMemory.
	Memory int64
	// FirstID is the sample id of the run's first row: 0, or for an append the base's sample
	// count, so that a duplicate's first occurrence is named by its id in the result.
	FirstID int64
}

// dedupStage is the run's dedup state.
type dedupStage struct {
	fields  []int // binding indexes
	table   *dedup.Table
	names   string // the fields' names, for the rejects file
	report  bool
	onlyRef bool         // every field stores a payload (so an all-empty sample has no key)
	firstID int64        // Dedup.FirstID
	buf     []byte       // the last rejects line
	hs      []dedup.Hash // a chunk's hashes, prefetched
}

// line returns the rejects line of duplicate e (valid until the next call).
func (st *dedupStage) line(e *SampleError, d *DuplicateError) []byte {
	st.buf = appendDuplicateLine(st.buf[:0], e, d)
	return st.buf
}

// dupItem is one written sample of a chunk with its key, checked as the chunk claims.
type dupItem struct {
	pos, row    int // its position in the chunk, and its row in the batch
	h           dedup.Hash
	origin, key string // aliases of the sample's strings, alive until the chunk is written
	lens        int    // where its payloads' sizes start in pending.dupLens
}

// The function returned closes the table the run made: keep leaves a resumable run's table
// files for the next run (an interruption after a checkpoint).
func (r *runner) openDedup(cfg *Config) (func(keep bool) error, error) {
	d := cfg.Dedup
	if d.FirstID < 0 {
		return nil, fmt.Errorf("%w: dedup first id %d", ErrConfig, d.FirstID)
	}
	st := &dedupStage{report: d.Mode == DedupReport, onlyRef: true, firstID: d.FirstID}
	for _, name := range d.Fields {
		idx := slices.IndexFunc(cfg.Fields, func(b Binding) bool { return b.Field.Name() == name })
		if idx < 0 {
			return nil, fmt.Errorf("%w: dedup field %q is not a field of the output", ErrConfig, name)
		}
		if slices.Contains(st.fields, idx) {
			return nil, fmt.Errorf("%w: dedup field %q given twice", ErrConfig, name)
		}
		st.fields = append(st.fields, idx)
		if !r.hasRef[idx] {
			st.onlyRef = false
		}
	}
	if len(st.fields) == 0 {
		return nil, fmt.Errorf("%w: dedup without fields", ErrConfig)
	}
	st.names = strings.Join(d.Fields, ",")
	st.table = d.Table
	closeFn := func(bool) error { return nil }
	if st.table == nil && r.ck != nil {
		// A resumable run: a durable table beside the output, reopened from the checkpoint
		// when there is one.
		t := r.ck.table
		if t == nil {
			var err error
			if t, err = dedup.New(r.dedupConfig()); err != nil {
				return nil, err
			}
		}
		r.ck.table = nil
		st.table = t
		closeFn = func(keep bool) error {
			if keep {
				return t.Keep()
			}
			return t.Close()
		}
	}
	if st.table == nil {
		dir := d.Dir
		if dir == "" {
			dir = os.TempDir()
		}
		t, err := dedup.New(dedup.Config{Dir: dir, Expected: max(r.total, 0), Memory: d.Memory})
		if err != nil {
			return nil, err
		}
		st.table, closeFn = t, func(bool) error { return t.Close() }
	}
	r.dd = st
	return closeFn, nil
}

// dedupKey records the key of the sample just appended to p's batch as row (in the worker,
// in parallel): hashing is the costly part, the lookup is left to the claim.
func (wk *worker) dedupKey(p *pending, pos, row int, origin, key string) {
	r := wk.r
	st := r.dd
	if wk.hasher == nil {
		wk.hasher = dedup.NewHasher()
	}
	k := wk.hasher
	k.Reset()
	empty := true
	for _, f := range st.fields {
		if r.hasRef[f] {
			k.Add(wk.pays[f])
			empty = empty && len(wk.pays[f]) == 0
		} else {
			k.Add(wk.row[r.offs[f] : r.offs[f]+r.sizes[f]])
		}
	}
	if empty && st.onlyRef {
		return
	}
	at := len(p.dupLens)
	for _, pay := range wk.pays {
		p.dupLens = append(p.dupLens, int64(len(pay)))
	}
	p.dups = append(p.dups, dupItem{pos: pos, row: row, h: k.Sum(), origin: origin, key: key, lens: at})
}

// dedupClaim runs as p claims its place, in chunk order, before its payloads are placed: it
// looks every sample's key up, records the duplicates as p's rejects (in sample order) and,
// in drop mode, takes them out of the batch.
func (r *runner) dedupClaim(p *pending, firstRow int64) error {
	st := r.dd
	if r.ck != nil {
		// A checkpoint at p records the table before p's keys.
		if err := r.take(p); err != nil {
			return err
		}
	}
	var drop []int
	st.hs = st.hs[:0]
	for _, it := range p.dups {
		st.hs = append(st.hs, it.h)
	}
	st.table.Prefetch(st.hs)
	for _, it := range p.dups {
		// The sample's id in the output, once the duplicates before it are taken out.
		id := st.firstID + firstRow + int64(it.row-len(drop))
		first, dup, err := st.table.Check(it.h, id, it.origin)
		if err != nil {
			return fmt.Errorf("dedup: %w", err)
		}
		if !dup {
			continue
		}
		p.rej = append(p.rej, &SampleError{Origin: strings.Clone(it.origin), Key: strings.Clone(it.key),
			Field: st.names, Reason: "duplicate", Err: &DuplicateError{First: first}, pos: it.pos})
		if st.report {
			continue
		}
		drop = append(drop, it.row)
		for f := range p.pays {
			if n := p.dupLens[it.lens+f]; n > 0 {
				p.pays[f][0]--
				p.pays[f][1] -= n
			}
		}
	}
	if len(drop) > 0 {
		p.b.Remove(drop)
	}
	if len(p.rej) > 1 {
		slices.SortStableFunc(p.rej, func(a, b *SampleError) int { return a.pos - b.pos })
	}
	return nil
}

// SeedDedup adds the samples of the MLDF file base (an append's base) to t, so that a run
// with Dedup.Table = t drops (or reports) the new samples that duplicate one of them: each
// row's payloads in fields are hashed as a run hashes them, and a duplicate names the base
// file and the row. fields must be fields of base. It returns the number of rows added
// (distinct keys; duplicates within base are not errors).
func SeedDedup(ctx context.Context, t *dedup.Table, base string, fields []string) (int64, error) {
	rd, err := mldf.Open(base)
	if err != nil {
		return 0, fmt.Errorf("dedup seed: %w", err)
	}
	defer rd.Close()
	return SeedDedupFrom(ctx, t, rd, base, fields)
}

// SeedDedupFrom is SeedDedup over an open base (rd, named name in the duplicates' reports:
// a local file or an object in a bucket).
func SeedDedupFrom(ctx context.Context, t *dedup.Table, rd *mldf.Reader, name string, fields []string) (int64, error) {
	if len(fields) == 0 {
		return 0, fmt.Errorf("%w: dedup without fields", ErrConfig)
	}
	descs := rd.Fields()
	idx := make([]int, len(fields))
	ref := make([]bool, len(fields))
	onlyRef := true
	for k, field := range fields {
		f := rd.FieldIndex(field)
		if f < 0 {
			return 0, fmt.Errorf("%w: dedup seed %s: the base has no field %q", ErrConfig, quote.S(name), field)
		}
		idx[k] = f
		_, ref[k] = mldf.MetaSize(descs[f].Type)
		onlyRef = onlyRef && ref[k]
	}
	k := dedup.NewHasher()
	before := t.Len()
	for i := range rd.NumSamples() {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return t.Len() - before, err
			}
		}
		k.Reset()
		empty := true
		for j, f := range idx {
			if ref[j] {
				pay, err := rd.Payload(i, f)
				if err != nil {
					return t.Len() - before, fmt.Errorf("dedup seed %s: sample %d: %w", quote.S(name), i, err)
				}
				k.Add(pay)
				empty = empty && len(pay) == 0
			} else {
				k.Add(rd.Meta(i, f))
			}
		}
		if empty && onlyRef {
			continue
		}
		if _, _, err := t.Check(k.Sum(), int64(i), name); err != nil {
			return t.Len() - before, fmt.Errorf("dedup seed %s: %w", quote.S(name), err)
		}
	}
	return t.Len() - before, nil
}

// firstEntry is a duplicate's first occurrence in the rejects file.
type firstEntry struct {
	Origin string `json:"origin"`
	Index  int64  `json:"index"`
}

// appendDuplicateLine appends the rejects file's line of duplicate e (its Err a *DuplicateError
// d): the bytes json.Marshal gives the rejects line, without reflection (one line per
// duplicate, so up to a tenth of the samples in the benchmark).
func appendDuplicateLine(b []byte, e *SampleError, d *DuplicateError) []byte {
	b = append(b, `{"origin":`...)
	b = appendJSONString(b, quote.S(e.Origin))
	b = append(b, `,"key":`...)
	b = appendJSONString(b, quote.S(e.Key))
	b = append(b, `,"field":`...)
	b = appendJSONString(b, e.Field)
	b = append(b, `,"reason":`...)
	b = appendJSONString(b, e.Reason)
	b = append(b, `,"error":`...)
	b = appendJSONString(b, e.Err.Error())
	b = append(b, `,"duplicate_of":{"origin":`...)
	b = appendJSONString(b, quote.S(d.First.Origin))
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, d.First.Index, 10)
	return append(b, "}}\n"...)
}

// appendJSONString appends s as encoding/json writes it: as it is when every byte is printable
// ASCII that json leaves alone, else through json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func firstOf(d *DuplicateError) *firstEntry {
	if d == nil {
		return nil
	}
	return &firstEntry{Origin: quote.S(d.First.Origin), Index: d.First.Index}
}
