package main

// The source and field types the command offers: each package registers its types
// (sources.Register, encoders.Register) when imported, as database/sql drivers do.
import (
	_ "github.com/mldf/convert/encoders/audiofield"
	_ "github.com/mldf/convert/encoders/imagefield"
	_ "github.com/mldf/convert/encoders/textfield"
	_ "github.com/mldf/convert/sources/audio"
	_ "github.com/mldf/convert/sources/h5ad"
	_ "github.com/mldf/convert/sources/imagefolder"
	_ "github.com/mldf/convert/sources/jsonl"
	_ "github.com/mldf/convert/sources/mdssrc"
	_ "github.com/mldf/convert/sources/mtx10x"
	_ "github.com/mldf/convert/sources/parquet"
	_ "github.com/mldf/convert/sources/scdlarchive"
	_ "github.com/mldf/convert/sources/tarsrc"
)
