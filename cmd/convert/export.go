package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/mldf/convert/export"
	"github.com/mldf/convert/internal/outpath"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/recipe"
)

const exportSynopsis = "export FILE DIR --format folder|webdataset|parquet|mds [--field IMAGE] [--label LABEL] [--key FIELD] [--shard-size 1GiB] [--shard-samples N] [--verify=false]"

// cmdExport writes the samples of an MLDF file back out as an image folder by label or as
// WebDataset tar shards (package export).
func cmdExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	format := new(string)
	choiceVar(fs, format, "format", "folder (DIR/<label>/<index>.<ext>), webdataset (DIR/shard-NNNNNN.tar) parquet (DIR/data-NNNNNN.parquet, Hugging Face style) or mds (DIR/shard.NNNNN.mds + index.json, MosaicML Streaming)",
		"folder", "webdataset", "parquet", "mds")
	field := fs.String("field", "", "the image `FIELD` (default: \"image\" or the only image field)")
	label := fs.String("label", "", "the INT label `FIELD` (default: \"label\" or the only INT field)")
	key := fs.String("key", "", "webdataset: a TEXT_RAW or BYTES field holding the sample keys (default: the index); parquet: a TEXT_RAW field of keys or paths for image.path (default: a text field called path, key or __key__; - for none)")
	shardSize := new(string)
	checkedVar(fs, shardSize, "shard-size", "SIZE", "webdataset: largest shard, e.g. 512MiB (default 1GiB); mds: size_limit (default 64MiB)", checkShardSize)
	shardSamples := new(int)
	intVar(fs, shardSamples, "shard-samples", 0, 0, math.MaxInt32, "0 = no limit", "webdataset: most samples per shard (0 = no limit)")
	verify := fs.Bool("verify", true, "check every checksum of FILE before exporting")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageErr("export", exportSynopsis)
	}
	if *format == "" {
		return fmt.Errorf("%w: export: --format is required: folder, webdataset, parquet or mds (convert %s)", errUsage, exportSynopsis)
	}
	var size int64
	if *shardSize != "" {
		size, _ = recipe.ParseSize(*shardSize) // checked by checkShardSize
	}
	if *format == "parquet" && (*shardSize != "" || *field != "" || *label != "") {
		return fmt.Errorf("%w: --format parquet writes every field; of the options it takes --shard-samples (rows per file) and --key", errUsage)
	}
	if *format == "mds" && (*shardSamples != 0 || *field != "" || *label != "" || *key != "") {
		return fmt.Errorf("%w: --format mds writes every field; of the options it takes --shard-size", errUsage)
	}
	if *format == "folder" && (*key != "" || *shardSize != "" || *shardSamples != 0) {
		return fmt.Errorf("%w: --key, --shard-size and --shard-samples apply to --format webdataset", errUsage)
	}
	var outs outpath.Set
	if err := outs.AddDir("export directory", pos[1]); err != nil {
		return err
	}
	c := objstore.New()
	defer c.Close()
	r, err := openMLDF(ctx, c, pos[0])
	if err != nil {
		return err
	}
	defer r.Close()
	if *verify {
		if _, err := r.Verify(); err != nil {
			return fmt.Errorf("%w (export --verify=false skips this check)", err)
		}
	}
	var res export.Result
	if *format == "mds" {
		res, err = export.MDS(ctx, r, pos[1], export.MDSOptions{SizeLimit: size})
	} else if *format == "parquet" {
		res, err = exportParquet(ctx, c, r, pos[0], pos[1], *key, *shardSamples)
	} else if *format == "folder" {
		res, err = exportFolder(ctx, c, r, pos[0], pos[1], export.FolderOptions{Image: *field, Label: *label})
	} else {
		res, err = export.WebDataset(ctx, r, pos[1], export.WebDatasetOptions{Image: *field, Label: *label,
			Key: *key, ShardSize: size, ShardSamples: *shardSamples})
	}
	if err != nil {
		return err
	}
	if len(res.Ignored) > 0 {
		fmt.Fprintf(stderr, "note: --format folder writes only the image and the label; not written: %s (use --format webdataset for every field)\n",
			strings.Join(res.Ignored, ", "))
	}
	for _, n := range res.Notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	if res.Skipped > 0 {
		fmt.Fprintf(stderr, "note: %d samples had nothing to write (empty payloads) and were skipped\n", res.Skipped)
	}
	unit := "files"
	if *format != "folder" {
		unit = "shards"
	}
	fmt.Fprintf(stdout, "exported %d samples of %s to %s: %d %s, %s\n", res.Samples, pos[0], pos[1], res.Files, unit, human(uint64(res.Bytes)))
	if len(res.Members) > 0 {
		names := make([]string, 0, len(res.Members))
		for n := range res.Members {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(stdout, "  %-16s → KEY.%s\n", n, res.Members[n])
		}
	}
	return nil
}
