package merge

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/mldf/convert/pagewriter"
)

// copyStep is how much is copied between checks of the context.
const copyStep = 64 << 20

// copier copies byte ranges from part files into the output.
type copier struct {
	dst    *pagewriter.Output
	dstFd  int
	method CopyMethod
	noCFR  bool // copy_file_range was refused: read and write from now on
	buf    []byte
	total  int64 // bytes copied
	ranged int64 // of total, by copy_file_range
}

// copy copies [srcOff, srcOff+n) of src to dstOff of the output.
func (c *copier) copy(ctx context.Context, src *os.File, srcOff, dstOff, n int64) error {
	for n > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		step := min(n, copyStep)
		done := int64(0)
		if c.method == CopyAuto && !c.noCFR {
			var ok bool
			var err error
			done, ok, err = pagewriter.CopyFileRange(int(src.Fd()), srcOff, c.dstFd, dstOff, step)
			if err != nil {
				return err
			}
			if !ok {
				c.noCFR = true
			}
			c.ranged += done
		}
		if done < step {
			if err := c.readWrite(src, srcOff+done, dstOff+done, step-done); err != nil {
				return err
			}
		}
		c.total += step
		srcOff, dstOff, n = srcOff+step, dstOff+step, n-step
	}
	return nil
}

// readWrite copies through c.buf with positional reads and writes.
func (c *copier) readWrite(src *os.File, srcOff, dstOff, n int64) error {
	for n > 0 {
		b := c.buf[:min(n, int64(len(c.buf)))]
		if err := c.readWriteBuf(src, b, srcOff, dstOff); err != nil {
			return err
		}
		l := int64(len(b))
		srcOff, dstOff, n = srcOff+l, dstOff+l, n-l
	}
	return nil
}

// readWriteBuf reads len(b) bytes at srcOff into b and writes them at dstOff of the output.
func (c *copier) readWriteBuf(src *os.File, b []byte, srcOff, dstOff int64) error {
	if _, err := src.ReadAt(b, srcOff); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("read at %d: %w", srcOff, err)
	}
	if _, err := c.dst.WriteAt(b, dstOff); err != nil {
		return fmt.Errorf("write at %d: %w", dstOff, err)
	}
	return nil
}
