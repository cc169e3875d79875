package pagewriter

// Remove takes out of b the rows (by their index in b, in increasing order) and their
// payloads, keeping the others in order. It is for a batch not yet claimed: BeforeClaim, or
// the batch's owner before Publish.
func (b *Batch) Remove(rows []int) {
	if len(rows) == 0 {
		return
	}
	rs := b.w.lay.RowSize
	// Rows: slide the kept ones down, and note each kept row's new index.
	newIdx := make([]int32, b.n)
	k, dst := 0, 0
	for r := range b.n {
		if k < len(rows) && rows[k] == r {
			k++
			newIdx[r] = -1
			continue
		}
		newIdx[r] = int32(dst)
		if dst != r {
			copy(b.rows[dst*rs:(dst+1)*rs], b.rows[r*rs:(r+1)*rs])
		}
		dst++
	}
	b.rows = b.rows[:dst*rs]
	b.n = dst
	// Items: keep those of kept rows, renumbered.
	j := 0
	for i := range b.items {
		it := b.items[i]
		if nr := newIdx[it.Row]; nr >= 0 {
			it.Row = nr
			b.items[j] = it
			j++
		} else {
			b.bytes -= int64(len(it.Data))
		}
	}
	clear(b.items[j:])
	b.items = b.items[:j]
}
