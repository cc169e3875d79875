package encoders

import "github.com/mldf/convert/sample"

// Packer is a field whose rows are cut from one stream of token ids across documents (a
// TEXT_PACKED field, textfield.Packed). The pipeline's packing stage (pipeline.Pack)
// tokenizes the documents with it, in parallel, and cuts the stream into the rows the field
// then encodes one by one.
type Packer interface {
	Field
	// PackLayout returns how the stream is cut into rows.
	PackLayout() PackLayout
	// DocumentIDs returns the ids one document adds to the stream: the text in column of s,
	// tokenized, and the separator unless the field packs without one. It is called from
	// several goroutines at once.
	DocumentIDs(s *sample.Sample, column string) ([]uint32, error)
	// AppendRow appends one row's ids to dst in the field's id encoding.
	AppendRow(dst []byte, ids []uint32) []byte
}

// PackLayout describes the rows of a Packer.
type PackLayout struct {
	SeqLen  int    // ids per row (>= 1)
	Width   int    // bytes per id in a row
	PadLast bool   // pad the last partial row with PadID (else it is dropped)
	PadID   uint32 // the padding id
	Column  string // the column of the rows the stage emits (the field reads it)
	Workers int    // goroutines tokenizing; 0 means GOMAXPROCS
}
