package encoders

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
)

func TestClassLabel(t *testing.T) {
	f, err := NewClassLabel("label", []string{"neg", "pos"})
	if err != nil {
		t.Fatal(err)
	}
	a := f.Arguments()
	// docs/fields/int.md: version 1, kind 1, 2 classes, xxhash64 of ["neg","pos"].
	if got := hex.EncodeToString(a[:16]); got != "0101000002000000ec825b56e303a464" {
		t.Fatalf("arguments %s", got)
	}
	for _, b := range a[16:] {
		if b != 0 {
			t.Fatalf("non-zero reserved bytes: % x", a)
		}
	}
	if count, sum, ok := ParseClassLabel(a); !ok || count != 2 || sum != 0x64a403e3565b82ec {
		t.Fatal(count, sum, ok)
	}
	if _, _, ok := ParseClassLabel([mldf.ArgumentsSize]byte{}); ok {
		t.Fatal("a plain INT parsed as a class label")
	}
	if err := CheckClassNames(a, []string{"neg", "pos"}); err != nil {
		t.Fatal(err)
	}
	for _, names := range [][]string{{"pos", "neg"}, {"neg"}, {"neg", "pos", "x"}} {
		if err := CheckClassNames(a, names); !errors.Is(err, ErrInvalid) {
			t.Errorf("%v: %v", names, err)
		}
	}
	meta := make([]byte, 8)
	for _, v := range []int64{-1, 0, 1} {
		if _, err := f.Encode(sample.Value{Kind: sample.KindInt, Int: v}, meta); err != nil || mldf.GetInt(meta) != v {
			t.Errorf("%d: %v", v, err)
		}
	}
	for _, v := range []int64{-2, 2, 100} {
		if _, err := f.Encode(sample.Value{Kind: sample.KindInt, Int: v}, meta); !errors.Is(err, ErrInvalid) {
			t.Errorf("%d: %v", v, err)
		}
	}
	if _, err := NewClassLabel("x", nil); err == nil {
		t.Error("no names: no error")
	}
	if string(ClassNamesJSON([]string{"a<b", "é"})) != `["a\u003cb","é"]` {
		t.Errorf("%s", ClassNamesJSON([]string{"a<b", "é"}))
	}
}
