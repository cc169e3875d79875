package merge

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pagewriter/multipart"
)

// Merging in a bucket (docs/STORAGE.md, "Merge in a bucket"): the parts are read through
// io.ReaderAt (their headers, descriptors and tables only), and the merged object is one
// multipart upload whose parts are either server-side copies of the parts' data regions
// (objstore Upload.CopyPart: S3 UploadPartCopy) or bytes made here (the header, the gaps,
// the rebased tables, and the short pieces of data regions that cannot be a part alone),
// assembled by multipart.Assembler (the part sizes and the order of the parts).

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
	asm := multipart.NewAssembler(ctx, up)
	defer func() {
		if err != nil {
			asm.Abort()
		}
	}()
	pre := preamble(h, a0.descs, a0.names)
	if _, err := asm.WriteAt(pre, 0); err != nil {
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
		if err := asm.Zeros(dst - asm.Offset()); err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		region := asm.Copy
		if p.f != nil {
			region = asm.Through // a local part: no server-side copy
		}
		if err := region(p.r, p.path, int64(p.hdr.DataPtr), p.dataLen()); err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		rep.DataBytes += p.dataLen()
	}
	rep.ServerCopied = asm.ServerCopied()
	if err := asm.Zeros(meta - asm.Offset()); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	d, end, err := writeTables(ps, asm.WriteAt, meta, pre, a0.descs, out)
	if err != nil {
		return err
	}
	if end != size || asm.Offset() != size {
		return fmt.Errorf("merge: internal error: tables end at %d (%d assembled), want %d", end, asm.Offset(), size)
	}
	if err := asm.Wait(); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	rep.CopyTime = time.Since(copyStart)
	if h.Flags&mldf.FlagChecksummed != 0 {
		h.Checksum = d.Sum64()
	}
	syncStart := time.Now()
	if err := asm.Complete(func(first []byte) { h.Put(first[mldf.HeaderOffset:]) }); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	rep.SyncTime = time.Since(syncStart)
	rep.Samples, rep.Entries, rep.Size, rep.Checksum = rows, entries, size, h.Checksum
	return nil
}
