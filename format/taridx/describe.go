package taridx

import (
	"fmt"
	"io"
	"strings"
)

// Description summarises an index for `convert inspect FILE.taridx`.
type Description struct {
	Version      string    `json:"version"` // "major.minor"
	FileSize     uint64    `json:"file_size"`
	Rows         uint64    `json:"rows"`
	Stems        uint64    `json:"stems"`
	Shards       int       `json:"shards"` // largest fid + 1
	Contiguous   bool      `json:"contiguous"`
	Flags        uint8     `json:"flags"`
	OffCrash     uint64    `json:"off_crash"`
	OffArr       uint64    `json:"off_arr"`
	PayloadBytes uint64    `json:"payload_bytes"` // sum of the rows' sizes
	Extensions   []ExtStat `json:"extensions"`    // in extid order
	CrashStems   []string  `json:"crash_stems"`
	PerShard     []uint64  `json:"rows_per_shard"` // rows by fid
}

// ExtStat counts the rows and payload bytes of one extension.
type ExtStat struct {
	ID    int    `json:"id"`
	Ext   string `json:"ext"`
	Rows  uint64 `json:"rows"`
	Bytes uint64 `json:"bytes"`
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
