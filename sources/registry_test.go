package sources

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func openNothing(context.Context, Config) (Source, error) { return nil, nil }

// TestRegister: a type registered is found by name and listed in the documentation's
// order, unknown types after; a bad or second registration panics with ErrRegister.
func TestRegister(t *testing.T) {
	Register(Spec{Name: "zz_test", Inputs: ByPath, Open: openNothing, Options: []Option{{Key: "k"}}})
	Register(Spec{Name: "tar", Inputs: ByInputs, Open: openNothing})
	s, ok := Lookup("zz_test")
	if !ok || !s.Takes("k") || s.Takes("other") {
		t.Fatalf("Lookup: %+v %v", s, ok)
	}
	if _, ok := Lookup("nope"); ok {
		t.Fatal("Lookup of an unregistered type succeeded")
	}
	if got := Types(); !slices.Equal(got, []string{"tar", "zz_test"}) {
		t.Errorf("Types() = %v", got)
	}
	for _, bad := range []Spec{
		{Name: "zz_test", Inputs: ByPath, Open: openNothing}, // twice
		{Name: "", Inputs: ByPath, Open: openNothing},
		{Name: "no_open", Inputs: ByPath},
		{Name: "both", Inputs: ByPath, Open: openNothing, Table: func(context.Context, Config) (Table, error) { return nil, nil }},
		{Name: "no_inputs", Open: openNothing},
	} {
		func() {
			defer func() {
				if err, _ := recover().(error); !errors.Is(err, ErrRegister) {
					t.Errorf("Register(%q): panic %v, want ErrRegister", bad.Name, err)
				}
			}()
			Register(bad)
		}()
	}
}

func TestConfigOptions(t *testing.T) {
	c := Config{Options: map[string]any{"b": true, "n": int64(7), "s": "x"}}
	if !c.Bool("b") || c.Int("n") != 7 || c.String("s") != "x" || c.Bool("n") || c.Int("missing") != 0 {
		t.Errorf("typed getters of %v", c.Options)
	}
}

func TestCheckSize(t *testing.T) {
	if msg := CheckSize("source.x", int64(512), 1<<10, 1<<20, "0 = 1MiB"); msg != "source.x 512 is out of range: 1KiB..1MiB (0 = 1MiB)" {
		t.Errorf("CheckSize: %q", msg)
	}
	if msg := CheckSize("source.x", int64(4096), 1<<10, 1<<20, ""); msg != "" {
		t.Errorf("CheckSize in range: %q", msg)
	}
}
