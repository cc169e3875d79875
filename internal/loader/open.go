package loader

import (
	"context"
	"fmt"

	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/reader"
)

// openSource opens a local file (memory-mapped) or an object in a bucket (ranged reads
// through a block cache).
func openSource(ctx context.Context, path string, opt Options) (*source, error) {
	if local, ok := objstore.LocalPath(path); ok {
		r, err := reader.Open(local)
		if err != nil {
			return nil, err
		}
		s, err := newSource(r)
		if err != nil {
			r.Close()
			return nil, err
		}
		return s, nil
	}
	return openRemote(ctx, path, opt)
}

func (s *source) version() string {
	h := s.r.Header()
	return fmt.Sprintf("%d.%d", h.VersionMajor, h.VersionMinor)
}
