//go:build !linux

package inputfile

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// OpenStream opens a stream input (a JSONL file, a tar shard): a regular file, or a named
// pipe. Outside Linux a named pipe with no writer blocks the open until one appears, and ctx
// cannot interrupt it. Anything else is refused with ErrNotStream.
func OpenStream(ctx context.Context, path string) (io.ReadCloser, fs.FileInfo, error) {
	if err := CheckPath(path); err != nil {
		return nil, nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if m := st.Mode(); !m.IsRegular() && m&fs.ModeNamedPipe == 0 {
		return nil, nil, fmt.Errorf("%w: %s is %s", ErrNotStream, path, Kind(m))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return f, st, nil
}
