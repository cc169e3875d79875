package loader

import (
	"context"

	"github.com/mldf/convert/objstore"
)

// openSource opens the file path names through objstore: a local file (the opened object
// has a File) is memory-mapped, an object in a bucket is read with ranged reads through a
// block cache.
func openSource(ctx context.Context, path string, opt Options) (*source, error) {
	c := objstore.New()
	ra, err := c.OpenRegular(ctx, path)
	if err != nil {
		c.Close()
		return nil, err
	}
	if f := ra.File(); f != nil {
		name := f.Name() // the local path (a file:// URL's path)
		ra.Close()
		c.Close()
		return openLocal(name)
	}
	return openRemote(ctx, path, opt, c, ra)
}
