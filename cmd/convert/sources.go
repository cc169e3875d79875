package main

// The source types the command reads: each package registers its types (sources.Register)
// when imported, as database/sql drivers do.
import (
	_ "github.com/mldf/convert/sources/audio"
	_ "github.com/mldf/convert/sources/h5ad"
	_ "github.com/mldf/convert/sources/imagefolder"
	_ "github.com/mldf/convert/sources/jsonl"
	_ "github.com/mldf/convert/sources/mtx10x"
	_ "github.com/mldf/convert/sources/parquet"
	_ "github.com/mldf/convert/sources/scdlarchive"
	_ "github.com/mldf/convert/sources/tarsrc"
)
