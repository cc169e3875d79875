package recipe

// The source types a program offers are those whose packages it imports (as
// cmd/convert does): the tests use every type of this module.
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
