package mldf

import "github.com/mldf/convert/pagewriter"

// Spec is what a container is created from (by the pipeline). Its fields are MLDF field
// descriptors whatever the output format: a .beton container maps them to its own.
type Spec struct {
	PageSize  int64 // 0: the container's default
	Fields    []FieldDesc
	Checksums bool
	Samples   int64 // the source's Len(): -1 when it streams
}

// ContainerFunc creates a container from a Spec: NewContainer, beton.NewContainer.
type ContainerFunc func(Spec) (pagewriter.Container, error)
