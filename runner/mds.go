package runner

import (
	"context"
	"fmt"
	"os"

	"github.com/mldf/convert/export"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/pipeline"
)

// runMDS converts into an MLDF file beside the output and exports it as an MDS dataset
// (format/mds): the output is a directory of shards and index.json, which appears last. The
// MLDF file is removed whatever happens.
func runMDS(ctx context.Context, cfg pipeline.Config) (pipeline.Report, error) {
	dir := cfg.Output
	tmp := dir + ".mldf.tmp"
	cfg.Output = tmp
	defer os.Remove(tmp)
	rep, err := pipeline.Run(ctx, cfg)
	if err != nil {
		return rep, err
	}
	r, err := mldf.Open(tmp)
	if err != nil {
		return rep, fmt.Errorf("mds output %s: %w", dir, err)
	}
	defer r.Close()
	res, err := export.MDS(ctx, r, dir, export.MDSOptions{})
	if err != nil {
		return rep, fmt.Errorf("mds output %s: %w", dir, err)
	}
	rep.Output, rep.BytesOut = dir, res.Bytes
	return rep, nil
}
