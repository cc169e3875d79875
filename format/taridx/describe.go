package taridx

import (
	"fmt"
	"io"
	"strings"
)

// Description summarises an index for `convert inspect FILE.taridx`; it encodes as
// DescriptionJSON.
type Description struct {
	File         string // the index's name, as given
	Version      string // "major.minor"
	FileSize     uint64
	Rows         uint64
	Stems        uint64
	Shards       int // largest fid + 1
	Contiguous   bool
	Flags        uint8
	OffCrash     uint64
	OffArr       uint64
	PayloadBytes uint64    // sum of the rows' sizes
	Extensions   []ExtStat // in extid order
	CrashStems   []string
	PerShard     []uint64 // rows by fid
}

// ExtStat counts the rows and payload bytes of one extension.
type ExtStat struct {
	ID    int
	Ext   string
	Rows  uint64
	Bytes uint64
}

// Describe summarises the index.
func (ix *Index) Describe() Description {
	h := ix.Header
	d := Description{
		Version:    fmt.Sprintf("%d.%d", h.Major, h.Minor),
		FileSize:   h.OffArr + uint64(len(ix.Rows))*RowSize,
		Rows:       h.NRows,
		Stems:      h.NStems,
		Shards:     ix.Shards(),
		Contiguous: h.Contiguous(),
		Flags:      h.Flags,
		OffCrash:   h.OffCrash,
		OffArr:     h.OffArr,
		Extensions: make([]ExtStat, len(ix.Exts)),
		CrashStems: ix.CrashStems,
		PerShard:   make([]uint64, ix.Shards()),
	}
	for i, e := range ix.Exts {
		d.Extensions[i] = ExtStat{ID: i, Ext: e}
	}
	for _, r := range ix.Rows {
		d.PayloadBytes += r.Size
		d.Extensions[r.ExtID].Rows++
		d.Extensions[r.ExtID].Bytes += r.Size
		d.PerShard[r.FID]++
	}
	return d
}

// WriteText writes the description as aligned text, one fact per line.
func (d Description) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "format      TARIDX %s\n", d.Version)
	fmt.Fprintf(&b, "file size   %d bytes (rows at %d, crash block at %d)\n", d.FileSize, d.OffArr, d.OffCrash)
	fmt.Fprintf(&b, "rows        %d (tar header blocks)\n", d.Rows)
	fmt.Fprintf(&b, "stems       %d\n", d.Stems)
	fmt.Fprintf(&b, "shards      %d\n", d.Shards)
	fmt.Fprintf(&b, "contiguous  %v (flags 0x%02x)\n", d.Contiguous, d.Flags)
	fmt.Fprintf(&b, "payload     %d bytes\n", d.PayloadBytes)
	fmt.Fprintf(&b, "extensions  %d\n", len(d.Extensions))
	for _, e := range d.Extensions {
		fmt.Fprintf(&b, "  %4d  %-16q rows %-10d bytes %d\n", e.ID, e.Ext, e.Rows, e.Bytes)
	}
	if len(d.CrashStems) > 0 {
		fmt.Fprintf(&b, "crash stems %d\n", len(d.CrashStems))
		for i, s := range d.CrashStems {
			fmt.Fprintf(&b, "  %4d  %q\n", i+1, s)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
