package inputfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// OpenStream opens a stream input (a JSONL file, a tar shard): a regular file, or a named
// pipe. A named pipe is opened without waiting for a writer; the returned reader then waits
// for one (and for data) in Go's poller, so cancelling ctx ends the wait, and any read, with
// an error wrapping ctx.Err(). The caller closes the reader. Anything else (a directory, a
// device, a socket) is refused with ErrNotStream.
func OpenStream(ctx context.Context, path string) (io.ReadCloser, fs.FileInfo, error) {
	if err := CheckPath(path); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	switch m := st.Mode(); {
	case m.IsRegular():
		return f, st, nil
	case m&fs.ModeNamedPipe == 0:
		f.Close()
		return nil, nil, fmt.Errorf("%w: %s is %s", ErrNotStream, path, Kind(m))
	}
	p := &pipe{f: f, ctx: ctx, path: path}
	p.stop = context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
	if err := p.waitWriter(); err != nil {
		p.Close()
		return nil, nil, err
	}
	return p, st, nil
}

// pipe reads a named pipe opened non-blocking: reads park in Go's poller, and ctx's
// cancellation sets a past read deadline that wakes them.
type pipe struct {
	f    *os.File
	ctx  context.Context
	path string
	stop func() bool
}

// waitWriter waits until the pipe has data or a writer has come and gone. Linux reports
// neither for a pipe that has had no writer since it was opened (a read would return 0 at
// once, which looks like an empty input), so the wait is a poll in Go's poller.
func (p *pipe) waitWriter() error {
	rc, err := p.f.SyscallConn()
	if err != nil {
		return err
	}
	err = rc.Read(func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		return err == nil && n > 0 && fds[0].Revents != 0
	})
	return p.wrap("wait for a writer", err)
}

func (p *pipe) wrap(op string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	if errors.Is(err, os.ErrDeadlineExceeded) && p.ctx.Err() != nil {
		return fmt.Errorf("%s: named pipe: %s: %w", p.path, op, p.ctx.Err())
	}
	return err
}

func (p *pipe) Read(b []byte) (int, error) {
	n, err := p.f.Read(b)
	return n, p.wrap("read", err)
}

func (p *pipe) Close() error {
	p.stop()
	return p.f.Close()
}
