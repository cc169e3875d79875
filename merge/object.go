package merge

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/objstore"
)

// Merging in a bucket (docs/STORAGE.md, "Merge in a bucket"): the parts are read through
// io.ReaderAt (their headers, descriptors and tables only), and the merged object is one
// multipart upload whose parts are either server-side copies of the parts' data regions
// (objstore Upload.CopyPart: S3 UploadPartCopy) or bytes made here (the header, the gaps,
// the rebased tables, and the short pieces of data regions that cannot be a part alone).

// Upload part sizes of the merged object (S3's rules: every part but the last at least
// 5 MiB, at most 5 GiB).
const (
	objMinPart  = 5 << 20  // the store's minimum for every part but the last
	objBufPart  = 16 << 20 // parts made of bytes are cut at this size
	objMaxCopy  = 4 << 30  // a server-side copy part is at most this
	objInFlight = 4        // parts uploaded or copied at once
)

// isLocal reports whether the output name is a local file (a plain path or a file:// URL),
// which the page writer writes with copy_file_range: the capability of its objstore.Target.
// A malformed URL is not local (objstore refuses it, naming it).
func isLocal(name string) bool {
	_, ok := objstore.TargetOf(name).Path()
	return ok
}

// FindObjectParts is FindParts for an output in a bucket: it lists the objects beside out
// and keeps the part names.
func FindObjectParts(ctx context.Context, c *objstore.Client, out string) ([]string, error) {
	base, ext := splitExt(out)
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(base) + `\.part-[0-9]{5,9}-of-[0-9]{5,9}` + regexp.QuoteMeta(ext) + `$`)
	byCount := map[int][]string{}
	for a, err := range c.List(ctx, base+".part-") {
		if err != nil {
			return nil, fmt.Errorf("find parts of %s: %w", out, err)
		}
		if !re.MatchString(a.URL) {
			continue
		}
		if _, _, n, err := ParsePartName(a.URL); err == nil {
			byCount[n] = append(byCount[n], a.URL)
		}
	}
	switch len(byCount) {
	case 0:
		return nil, fmt.Errorf("%w: no part objects %s.part-*-of-*%s", ErrMissingPart, base, ext)
	case 1:
		for _, ps := range byCount {
			sort.Strings(ps)
			return ps, nil
		}
	}
	counts := make([]string, 0, len(byCount))
	for n, ps := range byCount {
		counts = append(counts, fmt.Sprintf("%d parts of %d (e.g. %s)", len(ps), n, ps[0]))
	}
	sort.Strings(counts)
	return nil, fmt.Errorf("%w: parts of runs with different task counts lie beside %s: %s; list the parts to merge or remove the stale ones",
		ErrIncompatible, out, strings.Join(counts, "; "))
}

// assembler builds the merged object as a multipart upload from bytes and source ranges, in
// output order. Part 1 (it holds the header) is kept until finish, which patches the header
// in and uploads it last. Byte parts are objBufPart long; before a server-side copy the
// pending bytes are topped up from the copied range to the minimum part size.
type assembler struct {
	ctx   context.Context
	c     *objstore.Client
	up    *objstore.Upload
	g     *errgroup.Group
	part  int    // the next part number
	buf   []byte // pending bytes, not yet a part
	first []byte // part 1
	off   int64  // output offset of the next byte
	read  []byte // buffer of reads through the client
	rep   *Report
}

// bytes appends b at a.off.
func (a *assembler) bytes(b []byte, off int64) (int, error) {
	if off != a.off {
		return 0, fmt.Errorf("merge: internal error: bytes at %d, expected %d", off, a.off)
	}
	n := len(b)
	for len(b) > 0 {
		k := min(len(b), objBufPart-len(a.buf))
		a.buf = append(a.buf, b[:k]...)
		b, a.off = b[k:], a.off+int64(k)
		if len(a.buf) == objBufPart {
			if err := a.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// zeros appends n zero bytes.
func (a *assembler) zeros(n int64) error {
	var z [64 << 10]byte
	for n > 0 {
		k := min(n, int64(len(z)))
		if _, err := a.bytes(z[:k], a.off); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// through appends [off, off+n) of src, read through the client.
func (a *assembler) through(p *part, off, n int64) error {
	for n > 0 {
		b := a.read[:min(n, int64(len(a.read)))]
		if _, err := p.r.ReadAt(b, off); err != nil {
			return fmt.Errorf("merge: read %s at %d: %w", p.path, off, err)
		}
		if _, err := a.bytes(b, a.off); err != nil {
			return err
		}
		off, n = off+int64(len(b)), n-int64(len(b))
	}
	return nil
}

// flush makes the pending bytes the next part: part 1 is kept, others are uploaded.
func (a *assembler) flush() error {
	if len(a.buf) == 0 {
		return nil
	}
	b := a.buf
	a.buf = make([]byte, 0, objBufPart)
	n := a.part
	a.part++
	if n == 1 {
		a.first = b
		return nil
	}
	a.g.Go(func() error { return a.up.UploadPart(a.ctx, n, b) })
	return nil
}

// region appends [off, off+n) of p: copied server-side in parts of 5 MiB to 4 GiB, except
// what must join the pending bytes so that every part but the last is at least 5 MiB.
func (a *assembler) region(p *part, off, n int64) error {
	if p.f != nil {
		return a.through(p, off, n) // a local part: no server-side copy
	}
	if len(a.buf) > 0 && len(a.buf) < objMinPart {
		k := min(n, int64(objMinPart-len(a.buf)))
		if err := a.through(p, off, k); err != nil {
			return err
		}
		off, n = off+k, n-k
	}
	if n < objMinPart {
		return a.through(p, off, n)
	}
	if err := a.flush(); err != nil {
		return err
	}
	pieces := (n + objMaxCopy - 1) / objMaxCopy
	for i := range pieces {
		size := n / pieces
		if i == pieces-1 {
			size = n - size*(pieces-1)
		}
		num, from := a.part, off
		a.part++
		a.g.Go(func() error { return a.up.CopyPart(a.ctx, num, p.path, from, size) })
		a.rep.ServerCopied += size
		off += size
		a.off += size
	}
	return nil
}

// writeObject writes the merged file as the object out (a bucket URL): the same bytes as
// write makes locally. The data regions are copied server-side; the tables are streamed
// through the client. Nothing appears at out unless the upload completes.
func writeObject(ctx context.Context, out string, ps []*part, opt Options, rep *Report) (err error) {
	a0 := ps[0]
	h, rows, entries, size := plan(ps)
	meta := int64(h.MetadataPtr)
	if _, err := opt.Store.AbortIncomplete(ctx, out, 0); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	up, err := opt.Store.NewUpload(ctx, out)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(objInFlight)
	defer func() {
		if err != nil {
			g.Wait()
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			up.Abort(actx)
			cancel()
		}
	}()
	asm := &assembler{ctx: gctx, c: opt.Store, up: up, g: g, part: 1, buf: make([]byte, 0, objBufPart),
		read: make([]byte, chunkSize), rep: rep}
	pre := preamble(h, a0.descs, a0.names)
	if _, err := asm.bytes(pre, 0); err != nil {
		return err
	}
	copyStart := time.Now()
	for _, p := range ps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if p.dataLen() == 0 {
			continue
		}
		dst := int64(p.hdr.DataPtr) + p.shift
		if err := asm.zeros(dst - asm.off); err != nil {
			return err
		}
		if err := asm.region(p, int64(p.hdr.DataPtr), p.dataLen()); err != nil {
			return err
		}
		rep.DataBytes += p.dataLen()
	}
	if err := asm.zeros(meta - asm.off); err != nil {
		return err
	}
	d, end, err := writeTables(ps, asm.bytes, meta, pre, a0.descs, out)
	if err != nil {
		return err
	}
	if end != size || asm.off != size {
		return fmt.Errorf("merge: internal error: tables end at %d (%d assembled), want %d", end, asm.off, size)
	}
	if err := asm.flush(); err != nil {
		return err
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	rep.CopyTime = time.Since(copyStart)
	if h.Flags&mldf.FlagChecksummed != 0 {
		h.Checksum = d.Sum64()
	}
	h.Put(asm.first[mldf.HeaderOffset:])
	syncStart := time.Now()
	if err := up.UploadPart(ctx, 1, asm.first); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	if err := up.Complete(ctx); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	rep.SyncTime = time.Since(syncStart)
	rep.Samples, rep.Entries, rep.Size, rep.Checksum = rows, entries, size, h.Checksum
	return nil
}
