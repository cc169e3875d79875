package reader

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/mldf/convert/manifest"
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
	GapsChecked     bool    // gap bytes were checked to be zero (V7; minor version 0 files)
}

// Verify opens the file at path and checks every rule of docs/FORMAT.md §10.
func Verify(path string) (*VerifyReport, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Verify()
}

// zeroBlock is compared against gap bytes (never written).
var zeroBlock [4096]byte

// gapChunk bounds the buffer used to read gaps when the file is not mapped.
const gapChunk = 1 << 20

// Verify checks rules V1..V7 of docs/FORMAT.md §10 (Open has checked R1..R12) and returns
// the first violation found, as a *RuleError wrapping ErrCorrupt or ErrChecksum. The order is
// fixed: V1 (header checksum), then V2..V5 in file order, V6 (payload CRCs), V7 (gaps). The
// report is filled as far as the checks went.
func (r *Reader) Verify() (*VerifyReport, error) {
	if r.closed {
		return nil, fmt.Errorf("%s: %w", r.name, ErrClosed)
	}
	h := r.hdr
	rep := &VerifyReport{
		File: r.name, FileSize: int64(r.size), Samples: r.numSamples, Fields: len(r.fields),
		Entries: r.NumAllocEntries(), DataRegionBytes: h.MetadataPtr - h.DataPtr,
		Checksummed: h.Flags&manifest.FlagChecksummed != 0,
	}

	// V1: header checksum.
	if rep.Checksummed {
		got := manifest.HeaderChecksum(r.hdrBytes, r.descBytes, r.meta, r.alloc)
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
	// owner[k] = 1 + sample*F + field of the reference to entry k.
	owner := make([]uint64, n)
	nf := uint64(len(r.fields))
	hint := 0
	for i := range r.numSamples {
		for f := range r.fields {
			if !r.hasPayload[f] {
				continue
			}
			ref := manifest.GetRef(r.Meta(i, f))
			if _, msg := r.checkRef(ref); msg != "" {
				return rep, r.at(r.ruleErr("R13", ErrCorrupt, "%s", msg), i, f)
			}
			if ref.Size == 0 {
				rep.EmptyPayloads++
				continue
			}
			// Writers place payloads in row order: try the entry after the last match first.
			k := hint
			if k >= n || r.AllocEntry(k).Ptr != ref.Ptr {
				k = sort.Search(n, func(k int) bool { return r.AllocEntry(k).Ptr >= ref.Ptr })
			}
			if k == n || r.AllocEntry(k).Ptr != ref.Ptr {
				return rep, r.at(r.ruleErr("V5", ErrCorrupt,
					"payload [%d, %d+%d) has no allocation entry at ptr %d", ref.Ptr, ref.Ptr, ref.Size, ref.Ptr), i, f)
			}
			if e := r.AllocEntry(k); e.Size != ref.Size {
				err := r.at(r.ruleErr("V5", ErrCorrupt, "data_size %d but allocation entry at ptr %d has size %d", ref.Size, ref.Ptr, e.Size), i, f)
				err.Entry = k
				return rep, err
			}
			if owner[k] != 0 {
				oi, of := (owner[k]-1)/nf, int((owner[k]-1)%nf)
				err := r.at(r.ruleErr("V5", ErrCorrupt, "payload at ptr %d is also referenced by sample %d, field %d %q",
					ref.Ptr, oi, of, r.fields[of].Name), i, f)
				err.Entry = k
				return rep, err
			}
			owner[k] = 1 + uint64(i)*nf + uint64(f)
			hint = k + 1
		}
	}
	for k := range n {
		if owner[k] == 0 {
			e := r.AllocEntry(k)
			err := r.ruleErr("V5", ErrCorrupt, "entry (ptr %d, size %d) is not referenced by any metadata row", e.Ptr, e.Size)
			err.Entry = k
			return rep, err
		}
	}

	// V6: payload CRC-32C.
	if rep.Checksummed {
		for k := range n {
			e := r.AllocEntry(k)
			p, err := r.src.bytes(e.Ptr, uint64(e.Size))
			if err != nil {
				return rep, fmt.Errorf("%s: allocation entry %d: reading payload: %w", r.name, k, err)
			}
			if got := manifest.PayloadChecksum(p); got != e.Check {
				oi, of := (owner[k]-1)/nf, int((owner[k]-1)%nf)
				err := r.at(r.ruleErr("V6", ErrChecksum, "payload [%d, %d+%d) has CRC-32C %08x, the allocation table says %08x",
					e.Ptr, e.Ptr, e.Size, got, e.Check), int(oi), of)
				err.Entry = k
				return rep, err
			}
		}
		rep.ChecksumsOK = true
	}

	// V7: gaps are zero (files of the minor versions this reader knows).
	if h.VersionMinor <= manifest.VersionMinor {
		descEnd := h.FieldDescPtr + uint64(len(r.descBytes))
		if err := r.checkZero(manifest.PreambleSize, h.FieldDescPtr, "between the header and the field descriptors", -1); err != nil {
			return rep, err
		}
		if err := r.checkZero(descEnd, h.DataPtr, "between the field descriptors and the data region", -1); err != nil {
			return rep, err
		}
		cur := h.DataPtr
		for k := range n {
			e := r.AllocEntry(k)
			if err := r.checkZero(cur, e.Ptr, "of the data region before the payload of allocation entry", k); err != nil {
				return rep, err
			}
			cur = e.Ptr + uint64(e.Size)
		}
		if err := r.checkZero(cur, h.MetadataPtr, "at the end of the data region", -1); err != nil {
			return rep, err
		}
		rep.GapsChecked = true
	}
	return rep, nil
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
