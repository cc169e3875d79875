package loader

import (
	"context"
	"errors"
	"fmt"
)

func compileAudio(fi *fieldInfo, o *opSpec) (stage, Output, error) {
	return nil, Output{}, errors.New("audio ops: not yet")
}
func openRemote(ctx context.Context, path string, opt Options) (*source, error) {
	return nil, fmt.Errorf("%s: buckets: not yet", path)
}
func (s *source) prefetch(ctx context.Context, idx []int64, fields []int) error { return nil }

func codecs() []string {
	return []string{"int", "float", "bytes", "json", "text", "ndarray", "jpeg", "png", "raw"}
}
