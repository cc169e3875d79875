package mldf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// classesPath is the class-names golden file of docs/FORMAT.md §14: fields [label INT class
// label ["cat","dog","fish & chips"], data BYTES], three samples, page 4096.
var classesPath = filepath.Join("..", "..", "testdata", "golden", "classes.mldf")

// Offsets in the class-names golden file.
const (
	clArgs      = 80 + 76 // label's arguments
	clNamesPtr  = clArgs + 16
	clNamesSize = clArgs + 24
	clBlock     = 496
	clBlockLen  = 33 // len(`["cat","dog","fish \u0026 chips"]`)
	clMeta      = 4112
	clAlloc     = 4184
)

func classesGolden(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(classesPath)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rehashClasses recomputes the header checksum of a class-names golden file.
func rehashClasses(b []byte) []byte {
	le.PutUint64(b[hdr+56:], HeaderChecksum(b[hdr:hdr+64], b[80:496], b[clMeta:clAlloc], b[clAlloc:]))
	return b
}

// classCases break the class-names block or its place; want is the rule and where it is
// found: at Open, by ClassNames, or by Verify only.
var classCases = []struct {
	name, rule string
	when       string // "open", "names", "verify", "int"
	verify     string // the rule Verify reports, when not rule (it checks V7 before V8)
	mut        func(b []byte) []byte
}{
	{"misaligned", "R14", "open", "", func(b []byte) []byte { le.PutUint64(b[clNamesPtr:], clBlock+4); return rehashClasses(b) }},
	{"in the descriptors", "R14", "open", "", func(b []byte) []byte { le.PutUint64(b[clNamesPtr:], 488); return rehashClasses(b) }},
	{"past data_ptr", "R14", "open", "", func(b []byte) []byte { le.PutUint32(b[clNamesSize:], 4096); return rehashClasses(b) }},
	{"size without ptr", "R14", "open", "", func(b []byte) []byte { le.PutUint64(b[clNamesPtr:], 0); return rehashClasses(b) }},
	{"ptr without size", "R14", "open", "", func(b []byte) []byte { le.PutUint32(b[clNamesSize:], 0); return rehashClasses(b) }},
	{"huge", "R14", "open", "", func(b []byte) []byte { le.PutUint32(b[clNamesSize:], 1<<31); return rehashClasses(b) }},
	{"ptr overflow", "R14", "open", "", func(b []byte) []byte { le.PutUint64(b[clNamesPtr:], 1<<64-8); return rehashClasses(b) }},
	{"flipped name byte", "V8", "names", "", func(b []byte) []byte { b[clBlock+3] ^= 1; return b }},
	{"count", "V8", "names", "", func(b []byte) []byte { le.PutUint32(b[clArgs+4:], 4); return rehashClasses(b) }},
	{"shorter block", "V8", "names", "V7", func(b []byte) []byte { le.PutUint32(b[clNamesSize:], clBlockLen-8); return rehashClasses(b) }},
	{"not canonical", "V8", "names", "", func(b []byte) []byte {
		// [ "cat",... with a space, and a hash that matches: only the form is wrong.
		blk := []byte(`["cat", "dog","fish \u0026 chips"]`)
		copy(b[clBlock:], blk)
		le.PutUint32(b[clNamesSize:], uint32(len(blk)))
		var a [ArgumentsSize]byte
		copy(a[:], b[clArgs:clArgs+128])
		c, _ := ParseClassLabelArgs(a)
		c.NamesHash = xxhash.Sum64(blk)
		c.NamesSize = uint32(len(blk))
		c.Put(&a)
		copy(b[clArgs:], a[:])
		return rehashClasses(b)
	}},
	{"gap after the block", "V7", "verify", "", func(b []byte) []byte { b[clBlock+clBlockLen+1] = 1; return b }},
	{"label out of range", "F11", "int", "", func(b []byte) []byte { le.PutUint64(b[clMeta:], 3); return rehashClasses(b) }},
	{"label below -1", "F11", "int", "", func(b []byte) []byte { le.PutUint64(b[clMeta+24:], 1<<64-2); return rehashClasses(b) }},
}

func TestClassNamesRules(t *testing.T) {
	for _, c := range classCases {
		t.Run(c.name, func(t *testing.T) {
			b := c.mut(classesGolden(t))
			r, err := FromBytes("x.mldf", b)
			rule := c.rule
			check := func(err error) {
				t.Helper()
				var re *RuleError
				if !errors.As(err, &re) || re.Rule != rule || !errors.Is(err, ErrCorrupt) {
					t.Fatalf("got %v, want rule %s", err, rule)
				}
				if re.Field != 0 && rule != "V7" {
					t.Errorf("field %d in %v", re.Field, err)
				}
			}
			if c.when == "open" {
				check(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch c.when {
			case "names":
				_, err := r.Field("label").ClassNames()
				check(err)
			case "int":
				var err error
				for i := range r.NumSamples() {
					if _, e := r.Int(i, 0); e != nil {
						err = e
					}
				}
				check(err)
			}
			if c.verify != "" {
				rule = c.verify
			}
			_, err = r.Verify()
			check(err)
		})
	}
}

// TestClassNamesMinor0: in a 1.0 file the block members of the arguments are reserved bytes:
// a reader ignores them (no names, no error) and checks the gap is zero.
func TestClassNamesMinor0(t *testing.T) {
	b := classesGolden(t)
	le.PutUint16(b[hdr+2:], 0)
	rehashClasses(b)
	r, err := FromBytes("x.mldf", b)
	if err != nil {
		t.Fatal(err)
	}
	if names, err := r.ClassNames(0); names != nil || err != nil {
		t.Fatalf("%q %v", names, err)
	}
	if n, ok := r.NumClasses(0); !ok || n != 3 {
		t.Fatalf("NumClasses %d %v", n, ok)
	}
	// The block's bytes are now a non-zero gap of a 1.0 file.
	_, err = r.Verify()
	var re *RuleError
	if !errors.As(err, &re) || re.Rule != "V7" {
		t.Fatalf("Verify: %v", err)
	}
	// A later minor version than this reader knows: names read, gaps not checked.
	le.PutUint16(b[hdr+2:], 7)
	b[clBlock+clBlockLen+1] = 1
	rehashClasses(b)
	r, err = FromBytes("x.mldf", b)
	if err != nil {
		t.Fatal(err)
	}
	if names, err := r.ClassNames(0); len(names) != 3 || err != nil {
		t.Fatalf("%q %v", names, err)
	}
	if rep, err := r.Verify(); err != nil || rep.GapsChecked {
		t.Fatalf("%+v %v", rep, err)
	}
	if _, err := r.Field("nope").ClassNames(); !errors.Is(err, ErrOutOfRange) || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("missing field: %v", err)
	}
}
