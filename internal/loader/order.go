package loader

import (
	"errors"
	"fmt"
	"math/bits"
)

// Order modes.
const (
	OrderSequential  = "sequential"
	OrderRandom      = "random"
	OrderQuasiRandom = "quasi_random"
)

// DefaultWindowPages is the number of pages whose samples quasi_random shuffles together.
const DefaultWindowPages = 32

// ErrOrder: an order specification or a position outside the epoch.
var ErrOrder = errors.New("loader: bad order")

// OrderSpec says which samples a rank reads in an epoch, in which order.
type OrderSpec struct {
	// Mode is "sequential", "random" (a uniform shuffle of the whole file) or "quasi_random"
	// (windows of WindowPages pages, taken in random order, their samples shuffled).
	Mode  string `json:"mode"`
	Seed  uint64 `json:"seed"`
	Epoch int64  `json:"epoch"`
	// Rank and World split each epoch: rank r reads positions r, r+World, r+2·World, … of the
	// epoch's sequence. World 0 means 1.
	Rank  int `json:"rank"`
	World int `json:"world"`
	// DropLast drops the tail that does not divide by World; otherwise the sequence is padded
	// by wrapping around to its start, so that every rank has the same number of samples.
	DropLast bool `json:"drop_last"`
	// WindowPages is quasi_random's window (DefaultWindowPages when 0).
	WindowPages int `json:"window_pages"`
}

// Order is the sample sequence of one rank in one epoch. It holds O(1) memory: the
// permutations are computed per position. It is immutable and safe for concurrent use.
type Order struct {
	n, world, rank, length int64
	mode                   string
	perm                   feistel // random: positions → samples; quasi_random: blocks
	block, window          int64   // quasi_random: samples per block, blocks per window
	key                    uint64
}

// NewOrder returns the order of spec over n samples; pageSamples is the number of samples a
// page holds on average (the block that quasi_random keeps together).
func NewOrder(n int, pageSamples int, spec OrderSpec) (*Order, error) {
	world := int64(spec.World)
	if world == 0 {
		world = 1
	}
	if world < 0 || spec.Rank < 0 || int64(spec.Rank) >= world {
		return nil, fmt.Errorf("%w: rank %d of world %d", ErrOrder, spec.Rank, spec.World)
	}
	if n < 0 {
		return nil, fmt.Errorf("%w: %d samples", ErrOrder, n)
	}
	o := &Order{n: int64(n), world: world, rank: int64(spec.Rank), mode: spec.Mode}
	if spec.DropLast {
		o.length = o.n / world
	} else {
		o.length = (o.n + world - 1) / world
	}
	key := mix(mix(spec.Seed^0x6f72646572) ^ uint64(spec.Epoch))
	o.key = key
	switch spec.Mode {
	case OrderSequential, "":
		o.mode = OrderSequential
	case OrderRandom:
		o.perm = newFeistel(uint64(n), key)
	case OrderQuasiRandom:
		if spec.WindowPages < 0 {
			return nil, fmt.Errorf("%w: window_pages %d", ErrOrder, spec.WindowPages)
		}
		o.block = int64(max(pageSamples, 1))
		o.window = int64(spec.WindowPages)
		if o.window == 0 {
			o.window = DefaultWindowPages
		}
		o.perm = newFeistel(uint64(o.n/o.block), key)
	default:
		return nil, fmt.Errorf("%w: mode %q (want sequential, random or quasi_random)", ErrOrder, spec.Mode)
	}
	return o, nil
}

// Len returns the number of samples of the rank's epoch.
func (o *Order) Len() int { return int(o.length) }

// Fill writes the samples at positions [start, start+len(out)) of the rank's epoch into out.
func (o *Order) Fill(start int, out []int64) error {
	if start < 0 || int64(start)+int64(len(out)) > o.length {
		return fmt.Errorf("%w: positions %d..%d of an epoch of %d", ErrOrder, start, start+len(out), o.length)
	}
	for j := range out {
		g := (int64(start)+int64(j))*o.world + o.rank
		if g >= o.n {
			g %= o.n
		}
		out[j] = o.at(g)
	}
	return nil
}

// at returns the sample at position g of the whole epoch's sequence (0 <= g < n).
func (o *Order) at(g int64) int64 {
	switch o.mode {
	case OrderRandom:
		return int64(o.perm.at(uint64(g)))
	case OrderQuasiRandom:
		return o.quasi(g)
	}
	return g
}

// quasi maps a position to a sample: the file is cut into blocks of o.block consecutive
// samples (a page's worth); the full blocks are permuted, taken o.window at a time, and the
// samples of each window (the last one also holds the samples after the last full block)
// are permuted among themselves.
func (o *Order) quasi(g int64) int64 {
	full := o.n / o.block
	per := o.window * o.block
	nw := max((full+o.window-1)/o.window, 1)
	w := min(g/per, nw-1)
	q := g - w*per
	blocks := min(o.window, full-w*o.window)
	size := blocks * o.block
	if w == nw-1 {
		size = o.n - w*per
	}
	wp := newFeistel(uint64(size), mix(o.key^uint64(w)+0x77696e646f77))
	s := int64(wp.at(uint64(q)))
	if s < blocks*o.block {
		b := int64(o.perm.at(uint64(w*o.window + s/o.block)))
		return b*o.block + s%o.block
	}
	return full*o.block + s - blocks*o.block
}

// mix is SplitMix64's finaliser.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

const feistelRounds = 6

// feistel is a pseudo-random permutation of [0, n): a balanced Feistel network on the
// smallest even number of bits that holds n, walked until it lands below n (cycle walking;
// the domain is under 4n, so under 4 steps on average).
type feistel struct {
	n    uint64
	half uint
	mask uint64
	keys [feistelRounds]uint64
}

func newFeistel(n, key uint64) feistel {
	p := feistel{n: n}
	b := uint(bits.Len64(max(n, 2) - 1))
	b += b & 1
	p.half = b / 2
	p.mask = 1<<p.half - 1
	for r := range p.keys {
		key = mix(key + uint64(r))
		p.keys[r] = key
	}
	return p
}

func (p *feistel) at(x uint64) uint64 {
	if p.n <= 1 {
		return x
	}
	for {
		l, r := x>>p.half, x&p.mask
		for _, k := range p.keys {
			l, r = r, l^(mix(r^k)&p.mask)
		}
		x = l<<p.half | r
		if x < p.n {
			return x
		}
	}
}
