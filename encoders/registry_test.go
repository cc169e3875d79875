package encoders

import (
	"errors"
	"slices"
	"testing"

	"github.com/mldf/convert/sample"
)

// TestRegisteredScalars: the types of this package are registered with their keys, read
// kinds and constructors.
func TestRegisteredScalars(t *testing.T) {
	for _, typ := range []string{"int", "float", "bytes", "json", "ndarray"} {
		if !slices.Contains(Types(), typ) {
			t.Fatalf("%s is not registered: %v", typ, Types())
		}
	}
	s, _ := Lookup("int")
	f, err := s.New("label", NewOptions(map[string]any{"names": []string{"cat", "dog"}}, nil, nil))
	if _, ok := f.(*ClassLabel); !ok || err != nil {
		t.Errorf("int with names: %T, %v", f, err)
	}
	b, _ := Lookup("bytes")
	if k := b.Read(NewOptions(map[string]any{"base64": true}, nil, nil)); k != sample.KindBytes {
		t.Errorf("bytes with base64 reads %v", k)
	}
	if !b.Takes("base64") || b.Takes("dtype") {
		t.Errorf("bytes keys %v", b.Keys)
	}
}

func TestRegisterRefuses(t *testing.T) {
	for _, bad := range []FieldSpec{
		{Type: "int", New: func(string, *Options) (Field, error) { return nil, nil }}, // twice
		{Type: "", New: func(string, *Options) (Field, error) { return nil, nil }},
		{Type: "no_new"},
	} {
		func() {
			defer func() {
				if err, _ := recover().(error); !errors.Is(err, ErrRegister) {
					t.Errorf("Register(%q): panic %v, want ErrRegister", bad.Type, err)
				}
			}()
			Register(bad)
		}()
	}
}

// TestChecker: the messages of the checks shared by the field types.
func TestChecker(t *testing.T) {
	var got []string
	c := NewChecker(`field "x"`, func(key, msg string) { got = append(got, key+"|"+msg) })
	c.OneOf("mode", "bad", []string{"a", "b"})
	c.OneOf("mode", "a", []string{"a", "b"})
	c.In("n", 0, 1, 9, "0 = default")
	c.In("n", 10, 1, 9, "0 = default")
	c.In("m", 0, 1, 9, "")
	want := []string{
		`mode|field "x": mode: "bad" is not one of a, b`,
		`n|field "x": n 10 is out of range: 1..9 (0 = default)`,
		`m|field "x": m 0 is out of range: 1..9`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
