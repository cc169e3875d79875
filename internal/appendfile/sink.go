package appendfile

import (
	"context"
	"fmt"
	"os"

	"github.com/mldf/convert/internal/atomicfile"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/pagewriter/multipart"
)

// sink is where the result goes: a local file renamed over the target, or a multipart
// upload. Writes come in increasing offset order; the bytes between them are zero.
type sink interface {
	// write puts b at off.
	write(b []byte, off int64) error
	// region puts the base's [src, src+n) at dst.
	region(src, dst, n int64) error
	// finish puts the signature and header (the file's first bytes) in place and publishes
	// the result.
	finish(header []byte) error
	abort()
	// copied returns the bytes copied by copy_file_range and by the object store.
	copied() (ranged, server int64)
	// upload returns the ID of the multipart upload ("" for a local file).
	upload() string
}

// localSink is a temporary file beside the target (internal/atomicfile).
type localSink struct {
	o      *atomicfile.File
	b      *file
	ranged int64
}

func newLocalSink(b *file, out string, size int64) (*localSink, error) {
	perm := os.FileMode(0o644)
	if fi, err := b.f.Stat(); err == nil {
		perm = fi.Mode().Perm()
	}
	if lp, ok := objstore.TargetOf(out).Path(); ok {
		out = lp
	}
	o, err := atomicfile.Create(out, perm)
	if err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}
	// Size the file: the gaps stay holes (zero bytes).
	if err := o.Truncate(size); err != nil {
		o.Abort()
		return nil, fmt.Errorf("append: size %s: %w", out, err)
	}
	return &localSink{o: o, b: b}, nil
}

func (s *localSink) write(b []byte, off int64) error {
	if _, err := s.o.WriteAt(b, off); err != nil {
		return fmt.Errorf("append: write %s: %w", s.o.Target(), err)
	}
	return nil
}

func (s *localSink) region(src, dst, n int64) error {
	done, ok, err := pagewriter.CopyFileRange(int(s.b.f.Fd()), src, int(s.o.Fd()), dst, n)
	if err != nil {
		return err
	}
	s.ranged = done
	if !ok {
		return copyRW(context.Background(), s.b.f, s.o.File, src+done, dst+done, n-done)
	}
	return nil
}

func (s *localSink) finish(header []byte) error {
	if err := s.write(header, 0); err != nil {
		return err
	}
	if err := s.o.Commit(); err != nil {
		return fmt.Errorf("append: %w", err)
	}
	return nil
}

func (s *localSink) abort()                         { s.o.Abort() }
func (s *localSink) copied() (ranged, server int64) { return s.ranged, 0 }
func (s *localSink) upload() string                 { return "" }

// objectSink builds the result as a multipart upload (multipart.Assembler): part 1 (it holds
// the header) is kept until finish, which patches the header in and uploads it last; the
// base's data region is copied server-side, topped up through the client where a part would
// be under the minimum.
type objectSink struct {
	asm *multipart.Assembler
	b   *file
	id  string
}

func newObjectSink(ctx context.Context, store *objstore.Client, b *file, out string) (*objectSink, error) {
	up, err := store.NewUpload(ctx, out)
	if err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}
	return &objectSink{asm: multipart.NewAssembler(ctx, up), b: b, id: up.ID()}, nil
}

func (s *objectSink) write(b []byte, off int64) error {
	if _, err := s.asm.WriteAt(b, off); err != nil {
		return fmt.Errorf("append: %w", err)
	}
	return nil
}

func (s *objectSink) region(src, dst, n int64) error {
	if err := s.asm.Zeros(dst - s.asm.Offset()); err != nil {
		return fmt.Errorf("append: %w", err)
	}
	if err := s.asm.Copy(s.b.ra, s.b.path, src, n); err != nil {
		return fmt.Errorf("append: %w", err)
	}
	return nil
}

func (s *objectSink) finish(header []byte) error {
	if err := s.asm.Wait(); err != nil {
		return fmt.Errorf("append: %w", err)
	}
	if err := s.asm.Complete(func(first []byte) { copy(first, header) }); err != nil {
		return fmt.Errorf("append: %w", err)
	}
	return nil
}

func (s *objectSink) abort() { s.asm.Abort() }

func (s *objectSink) copied() (ranged, server int64) { return 0, s.asm.ServerCopied() }

func (s *objectSink) upload() string { return s.id }
