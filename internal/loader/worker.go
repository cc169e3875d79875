package loader

// worker is one decoding goroutine's state: its image decoder (created on first use) and
// scratch memory, reused from batch to batch through the loader's pool.
type worker struct {
	dec     imageDecoder
	scratch []byte
	n       int // samples decoded (which ones are timed with the thread clock)
}

func (w *worker) imageDecoder() (imageDecoder, error) {
	if w.dec == nil {
		d, err := newImageDecoder()
		if err != nil {
			return nil, err
		}
		w.dec = d
	}
	return w.dec, nil
}

func (w *worker) scratchBytes(n int) []byte {
	if cap(w.scratch) < n {
		w.scratch = make([]byte, n)
	}
	return w.scratch[:n]
}

func (w *worker) close() {
	if w.dec != nil {
		w.dec.close()
		w.dec = nil
	}
}
