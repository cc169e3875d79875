package mldf

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/sync/errgroup"
)

// VerifyReport summarises a verified file.
type VerifyReport struct {
	File            string
	FileSize        int64
	Samples         int
	Fields          int
	Entries         int     // allocation table entries (= non-empty payloads)
	EmptyPayloads   int     // payload references with data_size 0
	PayloadBytes    uint64  // sum of the entries' sizes
	DataRegionBytes uint64  // metadata_ptr - data_ptr
	PagesUsed       uint64  // distinct pages holding at least one payload byte
	PageFill        float64 // PayloadBytes / DataRegionBytes (0 when the region is empty)
	Checksummed     bool    // the file carries checksums (flag bit 2)
	ChecksumsOK     bool    // Checksummed and every CRC-32C and the header xxhash64 matched
	GapsChecked     bool    // gap bytes were checked to be zero (V7; files of minor versions 0 and 1)
	ClassNames      int     // fields whose class names are in the file, checked (V8)
	FieldsChecked   bool    // every value met the field rules F1..F10
	Decoded         int     // payloads decoded and checked (rules D1..D5, VerifyOptions.NewDecoder)
}

// PayloadDecoder decodes payloads for the content rules D1..D5 of docs/FORMAT.md §10.3:
// package reader/decode provides one. A decoder is used by one goroutine at a time.
type PayloadDecoder interface {
	// Decode checks payload, the non-empty payload of a field whose descriptor is fd, whose
	// rules are fr and whose metadata struct is meta (rules R13 and F1..F10 hold). It returns
	// nil or a *manifest.FieldError naming the broken rule.
	Decode(fd *FieldDesc, fr *FieldRules, meta, payload []byte) error
	// Close releases the decoder.
	Close()
}

// VerifyOptions configure VerifyWith. The zero value is what Verify does.
type VerifyOptions struct {
	// NewDecoder, when set, makes VerifyWith decode every non-empty payload (rules D1..D5),
	// after every other rule held, with one decoder per worker.
	NewDecoder func() (PayloadDecoder, error)
	// Workers is the number of goroutines that decode; 0 means runtime.GOMAXPROCS.
	Workers int
}

// Verify opens the file at path and checks every rule of docs/FORMAT.md §10 except the
// payload decoding rules (see VerifyWith).
func Verify(path string) (*VerifyReport, error) {
	return VerifyFile(context.Background(), path, VerifyOptions{})
}

// VerifyFile opens the file at path and runs VerifyWith.
func VerifyFile(ctx context.Context, path string, o VerifyOptions) (*VerifyReport, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.VerifyWith(ctx, o)
}

// zeroBlock is compared against gap bytes (never written).
var zeroBlock [4096]byte

// gapChunk bounds the buffer used to read gaps when the file is not mapped.
const gapChunk = 1 << 20

// Verify checks rules V1..V7 and F1..F10 of docs/FORMAT.md §10 (Open has checked R1..R12);
// see VerifyWith.
func (r *Reader) Verify() (*VerifyReport, error) {
	return r.VerifyWith(context.Background(), VerifyOptions{})
}

// VerifyWith checks rules V1..V7 and F1..F10 of docs/FORMAT.md §10 (Open has checked
// R1..R12), and D1..D5 when o.NewDecoder is set, and returns the first violation found, as a
// *RuleError wrapping ErrCorrupt or ErrChecksum. The order is fixed: V1 (header checksum),
// V2..V4 (the allocation table), V5 with R13 (every reference), F1..F10 (every value, in
// sample order), V6 (payload CRCs, or zero checks in a file without checksums), V7 (gaps),
// then D1..D5 (in sample order). The report is filled as far as the checks went.
//
// Memory does not grow with the number of samples: the tables and payloads are read in place
// (or in bounded chunks when the file is not mapped), and what was read is dropped from the
// resident set as the scans go. Only a file whose references do not visit the allocation
// entries in order (no writer of this module makes one) costs one bit per entry.
func (r *Reader) VerifyWith(ctx context.Context, o VerifyOptions) (*VerifyReport, error) {
	rep, err := r.verify(ctx, o)
	if ioErr := r.Err(); ioErr != nil {
		// A rule "broken" by zero bytes standing in for a failed read is not the answer.
		return rep, ioErr
	}
	return rep, err
}

func (r *Reader) verify(ctx context.Context, o VerifyOptions) (*VerifyReport, error) {
	if r.closed {
		return nil, fmt.Errorf("%s: %w", r.name, ErrClosed)
	}
	h := r.hdr
	rep := &VerifyReport{
		File: r.name, FileSize: int64(r.size), Samples: r.numSamples, Fields: len(r.fields),
		Entries: r.NumAllocEntries(), DataRegionBytes: h.MetadataPtr - h.DataPtr,
		Checksummed: h.Flags&FlagChecksummed != 0,
	}

	// V1: header checksum.
	if rep.Checksummed {
		got := r.headerChecksum()
		if got != h.Checksum {
			return rep, r.ruleErr("V1", ErrChecksum,
				"header checksum is %016x but the header, descriptors, metadata table and allocation table hash to %016x: one of them was altered",
				h.Checksum, got)
		}
	}

	// V2..V4: the allocation table alone.
	ps := uint64(h.PageSize)
	n := rep.Entries
	var prevEnd, lastPage uint64
	havePage := false
	for k := range n {
		r.touch(AllocEntrySize)
		e := r.AllocEntry(k)
		end, ok := add64(e.Ptr, uint64(e.Size))
		bad := func(rule, format string, args ...any) (*VerifyReport, error) {
			err := r.ruleErr(rule, ErrCorrupt, format, args...)
			err.Entry = k
			return rep, err
		}
		switch {
		case e.Size == 0:
			return bad("V2", "entry has size 0 (ptr %d); empty payloads have no entry", e.Ptr)
		case k > 0 && e.Ptr <= r.AllocEntry(k-1).Ptr:
			return bad("V2", "table not sorted by ptr: ptr %d follows ptr %d", e.Ptr, r.AllocEntry(k-1).Ptr)
		case k > 0 && e.Ptr < prevEnd:
			return bad("V2", "payload [%d, %d) overlaps the previous entry's payload, which ends at %d", e.Ptr, end, prevEnd)
		case !ok || e.Ptr < h.DataPtr || end > h.MetadataPtr:
			return bad("V3", "payload [%d, %d+%d) lies outside the data region [%d, %d)", e.Ptr, e.Ptr, e.Size, h.DataPtr, h.MetadataPtr)
		case uint64(e.Size) <= ps && e.Ptr/ps != (end-1)/ps:
			return bad("V4", "payload [%d, %d) of %d bytes crosses the page boundary at %d (page size %d)",
				e.Ptr, end, e.Size, (e.Ptr/ps+1)*ps, ps)
		case uint64(e.Size) > ps && e.Ptr%ps != 0:
			return bad("V4", "payload of %d bytes is larger than a page (%d) but starts at %d, not on a page boundary",
				e.Size, ps, e.Ptr)
		}
		prevEnd = end
		rep.PayloadBytes += uint64(e.Size)
		first, last := e.Ptr/ps, (end-1)/ps
		if havePage && first <= lastPage {
			first = lastPage + 1
		}
		if last >= first {
			rep.PagesUsed += last - first + 1
		}
		lastPage, havePage = max(lastPage, last), true
	}
	if rep.DataRegionBytes > 0 {
		rep.PageFill = float64(rep.PayloadBytes) / float64(rep.DataRegionBytes)
	}

	// V5 (and R13 for every row): references and entries match one to one.
	if err := r.checkRefs(ctx, rep); err != nil {
		return rep, err
	}

	// F1..F10: every field's arguments, then every value against its metadata.
	if err := r.checkFields(ctx); err != nil {
		return rep, err
	}
	rep.FieldsChecked = true

	// V6: payload CRC-32C; without checksums, every check is zero. The gaps between payloads
	// (V7) are read in the same pass, in file order, so that a file read through positional
	// reads (a bucket) is fetched once; their first violation is reported in V7's turn.
	checkGaps := h.VersionMinor <= VersionMinor // files of the minor versions this reader knows
	var gapErr error
	cur := h.DataPtr
	for k := range n {
		if k&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
		}
		e := r.AllocEntry(k)
		r.touch(AllocEntrySize + uint64(e.Size))
		if checkGaps && gapErr == nil {
			gapErr = r.checkZero(cur, e.Ptr, "of the data region before the payload of allocation entry", k)
			cur = e.Ptr + uint64(e.Size)
		}
		if !rep.Checksummed {
			if e.Check != 0 {
				oi, of, _ := r.PayloadOwner(e.Ptr)
				err := r.at(r.ruleErr("V6", ErrCorrupt,
					"flag bit 2 (checksummed) is clear but the allocation entry's check is %08x, where writers store zero: the flag was altered",
					e.Check), oi, of)
				err.Entry = k
				return rep, err
			}
			continue
		}
		p, err := r.src.bytes(e.Ptr, uint64(e.Size))
		if err != nil {
			return rep, fmt.Errorf("%s: allocation entry %d: reading payload: %w", r.name, k, err)
		}
		if got := PayloadChecksum(p); got != e.Check {
			oi, of, _ := r.PayloadOwner(e.Ptr)
			err := r.at(r.ruleErr("V6", ErrChecksum, "payload [%d, %d+%d) has CRC-32C %08x, the allocation table says %08x",
				e.Ptr, e.Ptr, e.Size, got, e.Check), oi, of)
			err.Entry = k
			return rep, err
		}
	}
	rep.ChecksumsOK = rep.Checksummed

	// V7: gaps are zero (files of the minor versions this reader knows).
	if checkGaps {
		descEnd := h.FieldDescPtr + uint64(len(r.descBytes))
		if err := r.checkZero(PreambleSize, h.FieldDescPtr, "between the header and the field descriptors", -1); err != nil {
			return rep, err
		}
		at := descEnd
		for _, b := range r.classBlockRanges() { // the class-names blocks are not gaps
			if err := r.checkZero(at, b[0], "between the field descriptors and the data region", -1); err != nil {
				return rep, err
			}
			at = b[1]
		}
		if err := r.checkZero(at, h.DataPtr, "between the field descriptors and the data region", -1); err != nil {
			return rep, err
		}
		if gapErr != nil { // between payloads, found by the V6 pass
			return rep, gapErr
		}
		if err := r.checkZero(cur, h.MetadataPtr, "at the end of the data region", -1); err != nil {
			return rep, err
		}
		rep.GapsChecked = true
	}

	// V8: the class-names blocks hold the names their fields' arguments describe.
	for f := range r.classes {
		names, err := r.ClassNames(f)
		if err != nil {
			return rep, err
		}
		if names != nil {
			rep.ClassNames++
		}
	}

	// D1..D5: decode every payload.
	if o.NewDecoder != nil {
		decoded, err := r.decodeAll(ctx, o)
		rep.Decoded = decoded
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// headerChecksum hashes the header, descriptors and tables as manifest.HeaderChecksum does,
// a window at a time.
func (r *Reader) headerChecksum() uint64 {
	d := xxhash.New()
	d.Write(r.hdrBytes[:HeaderChecksumOffset])
	d.Write(r.descBytes)
	for _, t := range []struct {
		b        []byte
		ptr, len uint64
		what     string
	}{{r.meta, r.hdr.MetadataPtr, r.metaLen, "metadata table"}, {r.alloc, r.hdr.AllocTablePtr, r.allocLen, "allocation table"}} {
		for off := uint64(0); off < t.len; {
			n := min(t.len-off, cacheBlock)
			d.Write(r.table(t.b, t.ptr, int(off), int(n), t.what))
			r.touch(n)
			off += n
		}
	}
	return d.Sum64()
}

// checkRefs applies R13 to every reference and V5: references and allocation entries match
// one to one. Writers place payloads in row order, so references usually visit the entries
// in order: while they do, each entry is matched exactly once and no memory is needed. At
// the first reference out of order it falls back to one bit per entry.
func (r *Reader) checkRefs(ctx context.Context, rep *VerifyReport) error {
	n := rep.Entries
	var used []uint64 // nil while the references follow the entries in order
	next := 0         // in order: the entry the next reference should match; else a hint
	for i := range r.numSamples {
		if i&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		r.touch(uint64(r.rowSize))
		for f := range r.fields {
			if !r.hasPayload[f] {
				continue
			}
			ref := GetRef(r.Meta(i, f))
			if _, msg := r.checkRef(ref); msg != "" {
				return r.at(r.ruleErr("R13", ErrCorrupt, "%s", msg), i, f)
			}
			if ref.Size == 0 {
				rep.EmptyPayloads++
				continue
			}
			k := next
			if k >= n || r.AllocEntry(k).Ptr != ref.Ptr {
				if used == nil {
					// Out of order: entries [0, next) were matched once each, in order.
					used = make([]uint64, (n+63)/64)
					for j := range next {
						used[j/64] |= 1 << (j % 64)
					}
				}
				k = sort.Search(n, func(k int) bool { return r.AllocEntry(k).Ptr >= ref.Ptr })
			}
			if k == n || r.AllocEntry(k).Ptr != ref.Ptr {
				return r.at(r.ruleErr("V5", ErrCorrupt,
					"payload [%d, %d+%d) has no allocation entry at ptr %d", ref.Ptr, ref.Ptr, ref.Size, ref.Ptr), i, f)
			}
			if e := r.AllocEntry(k); e.Size != ref.Size {
				err := r.at(r.ruleErr("V5", ErrCorrupt, "data_size %d but allocation entry at ptr %d has size %d", ref.Size, ref.Ptr, e.Size), i, f)
				err.Entry = k
				return err
			}
			if used != nil {
				if used[k/64]&(1<<(k%64)) != 0 {
					oi, of, _ := r.PayloadOwner(ref.Ptr) // an earlier row set the bit: found
					err := r.at(r.ruleErr("V5", ErrCorrupt, "payload at ptr %d is also referenced by sample %d, field %d %q",
						ref.Ptr, oi, of, r.fields[max(of, 0)].Name), i, f)
					err.Entry = k
					return err
				}
				used[k/64] |= 1 << (k % 64)
			}
			next = k + 1
		}
	}
	for k := range n {
		if used == nil && k < next || used != nil && used[k/64]&(1<<(k%64)) != 0 {
			continue
		}
		e := r.AllocEntry(k)
		err := r.ruleErr("V5", ErrCorrupt, "entry (ptr %d, size %d) is not referenced by any metadata row", e.Ptr, e.Size)
		err.Entry = k
		return err
	}
	return nil
}

// PayloadOwner returns the first sample and field whose payload reference points at ptr, or
// (-1, -1, false). It scans the metadata table (O(samples × fields)): it serves to name the
// sample of an error found from the allocation table.
func (r *Reader) PayloadOwner(ptr uint64) (sample, field int, ok bool) {
	for i := range r.numSamples {
		for f := range r.fields {
			if r.hasPayload[f] {
				if ref := GetRef(r.Meta(i, f)); ref.Size > 0 && ref.Ptr == ptr {
					return i, f, true
				}
			}
		}
	}
	return -1, -1, false
}

// checkFields applies rules F1..F10 to every field and value, in sample order.
func (r *Reader) checkFields(ctx context.Context) error {
	for f, fr := range r.rules {
		if err := fr.Arguments(); err != nil {
			return r.fieldErr(err, -1, f)
		}
	}
	for i := range r.numSamples {
		if i&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		r.touch(uint64(r.rowSize))
		for f, fr := range r.rules {
			if r.classes[f] != nil {
				if err := r.checkClassValue(i, f, GetInt(r.Meta(i, f))); err != nil {
					return err
				}
			}
			if !r.hasPayload[f] || fr.Empty() {
				continue
			}
			m := r.Meta(i, f)
			var p []byte
			if fr.NeedsPayload() {
				var err error
				if p, err = r.payload(i, f, GetRef(m)); err != nil {
					return err
				}
				r.touch(uint64(len(p)))
			}
			if err := fr.Check(m, p); err != nil {
				return r.fieldErr(err, i, f)
			}
		}
	}
	return nil
}

// decodeBatch is the number of samples a decode worker takes at a time.
const decodeBatch = 64

// decodeAll applies rules D1..D5 to every non-empty payload with o.Workers goroutines. The
// error reported is the one of the lowest sample that fails, whatever the number of workers:
// batches are handed out in sample order and, once one fails, only batches already handed out
// finish.
func (r *Reader) decodeAll(ctx context.Context, o VerifyOptions) (int, error) {
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	batches := (r.numSamples + decodeBatch - 1) / decodeBatch
	workers = max(1, min(workers, batches))
	var (
		next     atomic.Int64 // next batch to hand out
		failed   atomic.Bool
		decoded  atomic.Int64
		mu       sync.Mutex
		firstBad = -1
		firstErr error
	)
	g, gctx := errgroup.WithContext(ctx)
	for range workers {
		g.Go(func() error {
			dec, err := o.NewDecoder()
			if err != nil {
				return fmt.Errorf("%s: starting a payload decoder: %w", r.name, err)
			}
			defer dec.Close()
			for !failed.Load() {
				if err := gctx.Err(); err != nil {
					return err
				}
				b := int(next.Add(1) - 1)
				if b >= batches {
					return nil
				}
				i, err := r.decodeRange(dec, b*decodeBatch, min((b+1)*decodeBatch, r.numSamples), &decoded)
				if err != nil {
					mu.Lock()
					if firstBad < 0 || i < firstBad {
						firstBad, firstErr = i, err
					}
					mu.Unlock()
					failed.Store(true)
				}
			}
			return nil
		})
	}
	err := g.Wait()
	if firstErr != nil {
		return int(decoded.Load()), firstErr
	}
	return int(decoded.Load()), err
}

// decodeRange decodes the payloads of samples [from, to) and returns the sample of the first
// failure.
func (r *Reader) decodeRange(dec PayloadDecoder, from, to int, decoded *atomic.Int64) (int, error) {
	for i := from; i < to; i++ {
		for f := range r.fields {
			if !r.hasPayload[f] {
				continue
			}
			m := r.Meta(i, f)
			ref := GetRef(m)
			if ref.Size == 0 {
				continue
			}
			p, err := r.payload(i, f, ref)
			if err != nil {
				return i, err
			}
			if err := dec.Decode(&r.fields[f], r.rules[f], m, p); err != nil {
				return i, r.fieldErr(err, i, f)
			}
			r.touch(uint64(len(p)))
			decoded.Add(1)
		}
	}
	return to, nil
}

// checkZero returns a V7 error if any byte in [from, to) is not zero. where describes the
// gap; entry, when >= 0, is the allocation entry that follows it.
func (r *Reader) checkZero(from, to uint64, where string, entry int) error {
	for off := from; off < to; {
		n := min(to-off, gapChunk)
		b, err := r.src.bytes(off, n)
		if err != nil {
			return fmt.Errorf("%s: reading gap at %d: %w", r.name, off, err)
		}
		r.touch(n)
		if j := firstNonZero(b); j >= 0 {
			if entry >= 0 {
				where = fmt.Sprintf("%s %d", where, entry)
			}
			return r.ruleErr("V7", ErrCorrupt, "byte %d %s (gap [%d, %d)) is %#02x; gaps must be zero",
				off+uint64(j), where, from, to, b[j])
		}
		off += n
	}
	return nil
}

// firstNonZero returns the index of the first non-zero byte of b, or -1.
func firstNonZero(b []byte) int {
	i := 0
	for len(b)-i >= len(zeroBlock) && bytes.Equal(b[i:i+len(zeroBlock)], zeroBlock[:]) {
		i += len(zeroBlock)
	}
	for ; i < len(b); i++ {
		if b[i] != 0 {
			return i
		}
	}
	return -1
}
