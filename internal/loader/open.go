package loader

import (
	"context"

	"github.com/mldf/convert/objstore"
)

// openSource opens a local file (memory-mapped) or an object in a bucket (ranged reads
// through a block cache).
func openSource(ctx context.Context, path string, opt Options) (*source, error) {
	if local, ok := objstore.LocalPath(path); ok {
		return openLocal(local)
	}
	return openRemote(ctx, path, opt)
}
