package recipe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/sources"
)

// maxProbe bounds the first JSONL record read to learn its keys; a longer one is not
// probed.
const maxProbe = 16 << 20

// checkInputs checks, before any sample is converted, that src yields samples (unless
// allow_empty) and that it can supply the column each field reads (from), naming the
// recipe line of each problem. A JSONL source's first record is read to know its keys.
func checkInputs(ctx context.Context, r *Recipe, src sources.Source) error {
	c := &collector{}
	inKey := "path"
	if len(r.Source.Inputs) > 0 {
		inKey = "inputs"
	}
	inLine := r.line("source", inKey)
	empty := func(what string) {
		if !r.AllowEmpty {
			c.add(inLine, "source.%s: nothing to convert: %s (allow_empty: true accepts an empty input)", inKey, what)
		}
	}
	if cl, ok := src.(sources.ColumnLister); ok {
		cols := cl.Columns()
		for i, f := range r.Fields {
			if !slices.ContainsFunc(strings.Split(f.From, "|"), func(k string) bool { return slices.Contains(cols, k) }) {
				c.add(r.fromLine(i), "field %s: from %s: a %s source has no such column (its columns: %s)",
					quote.Q(f.Name), quote.Q(f.From), r.Source.Type, strings.Join(cols, ", "))
			}
		}
	}
	if src.Len() == 0 {
		// (An image folder with images but no class subfolders is refused by the source
		// itself, which tells to read it flat.)
		empty("no samples found")
	}
	if fr, ok := src.(sources.FirstRecorder); ok && src.Len() < 0 {
		line, file, err := fr.FirstRecord(ctx, maxProbe)
		switch {
		case errors.Is(err, sources.ErrFirstTooLong):
		case err != nil:
			return err
		case line == nil && file == "":
			empty("no records in any input")
		case line != nil:
			checkKeys(c, r, line, file)
		}
	}
	if p := c.problems(); p != nil {
		return r.problemsError(p)
	}
	return nil
}

// fromLine is the recipe line of field i's from key, or of the field when from is implied.
func (r *Recipe) fromLine(i int) int {
	if r.has("fields", "#"+strconv.Itoa(i), "from") {
		return r.line("fields", "#"+strconv.Itoa(i), "from")
	}
	return r.line("fields", "#"+strconv.Itoa(i))
}

// checkKeys checks that the first JSONL record has the key of every required field.
func checkKeys(c *collector, r *Recipe, line []byte, file string) {
	var rec map[string]json.RawMessage
	if json.Unmarshal(line, &rec) != nil {
		return // a bad record is a reject of its own
	}
	keys := make([]string, 0, len(rec))
	for k := range rec {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, f := range r.Fields {
		if f.Required != nil && !*f.Required {
			continue
		}
		if slices.ContainsFunc(strings.Split(f.From, "|"), func(k string) bool { return hasKey(rec, k) }) {
			continue
		}
		list := strings.Join(keys, ", ")
		if len(keys) > 20 {
			list = strings.Join(keys[:20], ", ") + fmt.Sprintf(", ... (%d keys)", len(keys))
		}
		c.add(r.fromLine(i), "field %s: from %s: the first record of %s has no such key (its keys: %s); set required: false if only some records have it",
			quote.Q(f.Name), quote.Q(f.From), quote.S(file), quote.S(list))
	}
}

// hasKey reports whether a record has the dotted key path (a literal top-level key, or
// object keys and array indexes segment by segment).
func hasKey(rec map[string]json.RawMessage, path string) bool {
	if v, ok := rec[path]; ok {
		return string(v) != "null"
	}
	head, rest, nested := strings.Cut(path, ".")
	v, ok := rec[head]
	if !ok || !nested {
		return false
	}
	for seg := range strings.SplitSeq(rest, ".") {
		var obj map[string]json.RawMessage
		var arr []json.RawMessage
		switch {
		case json.Unmarshal(v, &obj) == nil:
			if v, ok = obj[seg]; !ok {
				return false
			}
		case json.Unmarshal(v, &arr) == nil:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(arr) {
				return false
			}
			v = arr[i]
		default:
			return false
		}
	}
	return string(v) != "null"
}

// problemsError wraps problems in ErrRecipe, naming the recipe file when there is one.
func (r *Recipe) problemsError(p Problems) error {
	if r.file != "" {
		return fmt.Errorf("%w %s: %w", ErrRecipe, quote.S(r.file), p)
	}
	return fmt.Errorf("%w: %w", ErrRecipe, p)
}
