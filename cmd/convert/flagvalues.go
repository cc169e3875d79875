package main

import (
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mldf/convert/recipe"
)

// Flag values checked as they are parsed: a bad value is a usage error (exit status 2) that
// names the flag and what it accepts, never a recipe error about a key the user did not write.
// Every flag whose value has rules uses one of these types.

// choiceFlag is a string flag whose value must be one of choices.
type choiceFlag struct {
	p       *string
	choices []string
}

func (v *choiceFlag) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return *v.p
}

func (v *choiceFlag) Set(s string) error {
	if !slices.Contains(v.choices, s) {
		return fmt.Errorf("want one of %s", strings.Join(v.choices, ", "))
	}
	*v.p = s
	return nil
}

// choiceVar defines a string flag that accepts one of choices.
func choiceVar(fs *flag.FlagSet, p *string, name, usage string, choices ...string) {
	fs.Var(&choiceFlag{p: p, choices: choices}, name, usage)
}

// intFlag is an int flag whose value must be in [lo, hi]; note says what the bounds mean.
type intFlag struct {
	p      *int64
	lo, hi int64
	note   string
}

func (v *intFlag) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return strconv.FormatInt(*v.p, 10)
}

func (v *intFlag) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil || n < v.lo || n > v.hi {
		msg := fmt.Sprintf("want an integer from %d to %d", v.lo, v.hi)
		if v.note != "" {
			msg += " (" + v.note + ")"
		}
		return fmt.Errorf("%s", msg)
	}
	*v.p = n
	return nil
}

// intVar defines an int flag that accepts lo..hi.
func intVar(fs *flag.FlagSet, p *int, name string, value int, lo, hi int64, note, usage string) {
	*p = value
	fs.Var(&intAdapter{intFlag{p: new(int64), lo: lo, hi: hi, note: note}, p}, name, usage)
}

// intAdapter stores an intFlag's value in an int.
type intAdapter struct {
	intFlag
	dst *int
}

func (v *intAdapter) String() string {
	if v == nil || v.dst == nil {
		return ""
	}
	return strconv.Itoa(*v.dst)
}

func (v *intAdapter) Set(s string) error {
	if err := v.intFlag.Set(s); err != nil {
		return err
	}
	*v.dst = int(*v.intFlag.p)
	return nil
}

// int64Var defines an int64 flag that accepts lo..hi.
func int64Var(fs *flag.FlagSet, p *int64, name string, value, lo, hi int64, note, usage string) {
	*p = value
	fs.Var(&intFlag{p: p, lo: lo, hi: hi, note: note}, name, usage)
}

// floatFlag is a float flag whose value must be in [lo, hi] (not NaN).
type floatFlag struct {
	p      *float64
	lo, hi float64
	note   string
}

func (v *floatFlag) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return strconv.FormatFloat(*v.p, 'g', -1, 64)
}

func (v *floatFlag) Set(s string) error {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || x < v.lo || x > v.hi {
		return fmt.Errorf("want a number from %g to %g (%s)", v.lo, v.hi, v.note)
	}
	*v.p = x
	return nil
}

// durationFlag is a duration flag that must not be negative.
type durationFlag struct{ p *time.Duration }

func (v *durationFlag) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return v.p.String()
}

func (v *durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("want a duration such as 24h or 90m, not negative")
	}
	*v.p = d
	return nil
}

// durationVar defines a non-negative duration flag.
func durationVar(fs *flag.FlagSet, p *time.Duration, name string, usage string) {
	fs.Var(&durationFlag{p}, name, usage)
}

// checkedFlag is a string flag checked by a function (sizes, max_errors); meta names its
// value in the help (SIZE).
type checkedFlag struct {
	p     *string
	check func(string) error
	meta  string
}

func (v *checkedFlag) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return *v.p
}

func (v *checkedFlag) Set(s string) error {
	if err := v.check(s); err != nil {
		return err
	}
	*v.p = s
	return nil
}

// checkedVar defines a string flag whose value check accepts; meta names the value in the
// help (SIZE, N|N%).
func checkedVar(fs *flag.FlagSet, p *string, name, meta, usage string, check func(string) error) {
	fs.Var(&checkedFlag{p: p, check: check, meta: meta}, name, usage)
}

// checkPageSize accepts a page size: a power of two in the recipe's range.
func checkPageSize(s string) error {
	n, err := recipe.ParseSize(s)
	if err != nil || n < recipe.MinPageSize || n > recipe.MaxPageSize || n&(n-1) != 0 {
		return fmt.Errorf("want a power of two from %s to %s, such as 2MiB",
			recipe.FormatSize(recipe.MinPageSize), recipe.FormatSize(recipe.MaxPageSize))
	}
	return nil
}

// checkShardSize accepts a positive size such as 1GiB.
func checkShardSize(s string) error {
	if n, err := recipe.ParseSize(s); err != nil || n <= 0 {
		return fmt.Errorf("want a size such as 512MiB or 1GiB")
	}
	return nil
}

// checkMaxErrors accepts a max_errors value: a count or a percentage.
func checkMaxErrors(s string) error {
	if _, _, err := recipe.ParseMaxErrors(s); err != nil {
		return fmt.Errorf("want a count of samples (e.g. 100) or a percentage (e.g. 1%%): %w", err)
	}
	return nil
}

// Field options whose accepted values depend on the field's type.
var (
	imageChannels = []string{"1", "3", "4"}
	audioChannels = []string{"mono", "keep"}
)
