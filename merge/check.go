package merge

import (
	"context"
	"fmt"
	"hash/crc32"

	"github.com/mldf/convert/format/mldf"
)

// castagnoli is the CRC-32C table of the payload checks (docs/FORMAT.md §8).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// entryStream reads a part's allocation table in order through a bounded buffer and checks
// that it is sorted, non-overlapping and inside the data region (rules V2, V3): the order the
// checked copy relies on.
type entryStream struct {
	p    *part
	buf  []byte
	have int64 // entries in buf
	at   int64 // index of buf's first entry
	next int64 // index of the next entry to return
	prev uint64
}

// entry returns entry k = s.next and advances; ok is false at the end of the table.
func (s *entryStream) entry() (e mldf.AllocEntry, k int64, ok bool, err error) {
	const es = mldf.AllocEntrySize
	k = s.next
	if k >= s.p.entries {
		return e, k, false, nil
	}
	if k >= s.at+s.have {
		n := min(int64(len(s.buf))/es, s.p.entries-k)
		if _, err := s.p.r.ReadAt(s.buf[:n*es], int64(s.p.hdr.AllocTablePtr)+k*es); err != nil {
			return e, k, false, fmt.Errorf("merge: read allocation table of %s: %w", s.p.path, err)
		}
		s.at, s.have = k, n
	}
	e = mldf.DecodeAllocEntry(s.buf[(k-s.at)*es:])
	s.next++
	lo, hi := s.p.hdr.DataPtr, s.p.hdr.MetadataPtr
	switch {
	case e.Size == 0 || (k > 0 && e.Ptr < s.prev):
		return e, k, false, fmt.Errorf("merge: %w: %s allocation entry %d (ptr %d, size %d) is empty, out of order or overlaps the previous payload (FORMAT.md rule V2)",
			ErrCorruptPart, s.p.path, k, e.Ptr, e.Size)
	case e.Ptr < lo || e.Ptr > hi || uint64(e.Size) > hi-e.Ptr:
		return e, k, false, fmt.Errorf("merge: %w: %s allocation entry %d: payload [%d, %d+%d) lies outside the data region [%d, %d) (FORMAT.md rule V3)",
			ErrCorruptPart, s.p.path, k, e.Ptr, e.Ptr, e.Size, lo, hi)
	}
	s.prev = e.Ptr + uint64(e.Size)
	return e, k, true, nil
}

// copyChecked copies p's data region to dstOff of the output through c's buffer and checks
// every payload on the way: its CRC-32C, computed from the bytes copied, must equal its
// allocation entry's check (rule V6). A part without checksums must have zero checks. The
// copy reads every byte once; memory is two fixed buffers.
func (c *copier) copyChecked(ctx context.Context, p *part, dstOff int64) error {
	es := &entryStream{p: p, buf: make([]byte, chunkSize)}
	checksummed := p.hdr.Flags&mldf.FlagChecksummed != 0
	if !checksummed {
		// Nothing to compute: the checks must be zero (V6), then the data is copied as is.
		for {
			e, k, ok, err := es.entry()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			if e.Check != 0 {
				return p.payloadErr(k, e, fmt.Sprintf("flag bit 2 (checksummed) is clear but the allocation entry's check is %08x, where writers store zero", e.Check))
			}
		}
		return c.copy(ctx, p.f, int64(p.hdr.DataPtr), dstOff, p.dataLen())
	}
	cur, k, have, err := es.entry()
	if err != nil {
		return err
	}
	var crc uint32
	start := int64(p.hdr.DataPtr)
	for off := start; off < start+p.dataLen(); {
		if (off-start)%copyStep == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		n := min(start+p.dataLen()-off, int64(len(c.buf)))
		b := c.buf[:n]
		if err := c.readWriteBuf(p.f, b, off, dstOff+(off-start)); err != nil {
			return err
		}
		c.total += n
		end := uint64(off + n)
		for have && cur.Ptr < end {
			from := max(cur.Ptr, uint64(off))
			to := min(cur.Ptr+uint64(cur.Size), end)
			crc = crc32.Update(crc, castagnoli, b[from-uint64(off):to-uint64(off)])
			if to < cur.Ptr+uint64(cur.Size) {
				break // the payload continues in the next chunk
			}
			if crc != cur.Check {
				return p.payloadErr(k, cur, fmt.Sprintf("payload [%d, %d+%d) has CRC-32C %08x, the allocation table says %08x",
					cur.Ptr, cur.Ptr, cur.Size, crc, cur.Check))
			}
			crc = 0
			if cur, k, have, err = es.entry(); err != nil {
				return err
			}
		}
		off += n
	}
	if have {
		return fmt.Errorf("merge: %w: %s allocation entry %d lies past the data region", ErrCorruptPart, p.path, k)
	}
	return nil
}

// payloadErr names the part, the sample and field of allocation entry k, and rule V6.
func (p *part) payloadErr(k int64, e mldf.AllocEntry, msg string) error {
	where := fmt.Sprintf("allocation entry %d", k)
	if rd, err := openReader(p.path, p.obj); err == nil {
		if i, f, ok := rd.PayloadOwner(e.Ptr); ok {
			where = fmt.Sprintf("sample %d, field %d %q, allocation entry %d", i, f, rd.Fields()[f].Name, k)
		}
		rd.Close()
	}
	return fmt.Errorf("merge: part %d: %w: %s: %s: %s (FORMAT.md rule V6); nothing was written, re-run task %d",
		p.index, ErrCorruptPart, p.path, where, msg, p.index)
}
