package recipe

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mldf/convert/internal/quote"
	suggestpkg "github.com/mldf/convert/internal/suggest"
)

// The recipe is decoded by walking the YAML node tree, not by yaml.Decode: every unknown
// key and every value of the wrong type is reported (with its key and line) in one pass,
// together with the semantic problems Validate finds, and a number where an integer is
// expected is never truncated (jpeg_quality: 90.5 is an error, not 90).

// MaxRecipeBytes is the largest recipe file read; a larger one is refused before parsing.
const MaxRecipeBytes = 4 << 20

// MaxProblems is how many problems an error lists; the rest are counted.
const MaxProblems = 50

// maxKept bounds the problems held while collecting (a hostile recipe may have 10^6 of
// them); the first MaxProblems by line are among the first maxKept found, since each pass
// finds its problems in line order.
const maxKept = 4096

// refusedMark prefixes the path of a key whose value was refused, in Recipe.keys.
const refusedMark = "!"

// moreMark starts the last entry of a truncated Problems: "(and 123 more)".
const moreMark = "(and "

type problem struct {
	line int
	msg  string
}

// collector gathers problems: the first maxKept, and a count of all.
type collector struct {
	kept  []problem
	total int
}

func (c *collector) add(line int, format string, args ...any) {
	c.total++
	if len(c.kept) < maxKept {
		c.kept = append(c.kept, problem{line, fmt.Sprintf(format, args...)})
	}
}

// full reports whether further problems are only counted (a caller may then skip the work
// of describing one).
func (c *collector) full() bool { return len(c.kept) >= maxKept }

func (c *collector) merge(o *collector) {
	c.total += o.total - len(o.kept)
	for _, p := range o.kept {
		c.total++
		if len(c.kept) < maxKept {
			c.kept = append(c.kept, p)
		}
	}
}

// problems returns the first MaxProblems by line (the others counted in a last entry), or
// nil when there are none.
func (c *collector) problems() Problems {
	if c.total == 0 {
		return nil
	}
	ps := slicesClone(c.kept)
	sort.SliceStable(ps, func(i, j int) bool { return lineKey(ps[i].line) < lineKey(ps[j].line) })
	n := min(len(ps), MaxProblems)
	out := make(Problems, 0, n+1)
	for _, p := range ps[:n] {
		if p.line > 0 {
			out = append(out, fmt.Sprintf("line %d: %s", p.line, p.msg))
		} else {
			out = append(out, p.msg)
		}
	}
	if c.total > n {
		out = append(out, fmt.Sprintf(moreMark+"%d more)", c.total-n))
	}
	return out
}

// lineKey sorts problems without a line (a flag, a missing key) after those with one.
func lineKey(line int) int {
	if line <= 0 {
		return 1 << 30
	}
	return line
}

func slicesClone(p []problem) []problem { return append([]problem(nil), p...) }

// decoder fills a Recipe from its node tree, recording the line of every key it meets
// (keys, by path such as "fields/#2/jpeg_quality") and every problem.
type decoder struct {
	probs  *collector
	keys   map[string]int
	budget int // node visits left: aliases may not expand a small file into a huge tree
	// exhausted is the line where the budget ran out (0: it did not).
	exhausted int
}

var sizeType = reflect.TypeOf(Size(0))

// kindName names a node's kind for messages.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return "a value"
}

// deref follows aliases; nil when the budget is spent.
func (d *decoder) deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// label names key k of the mapping at ctx for messages: "workers", "source.path",
// `field "image": jpeg_quality`.
func label(ctx, k string) string {
	switch {
	case ctx == "":
		return k
	case ctx == "source":
		return "source." + k
	}
	return ctx + ": " + k
}

// decode decodes node n into v (path is its index path, name its label in messages); ok
// is false when the value itself was refused (a problem recorded).
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path, name string) (ok bool) {
	if d.budget < 0 {
		return false
	}
	d.budget--
	n = d.deref(n)
	if n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return true // an empty value leaves the default
	}
	line := n.Line
	if d.budget -= len(n.Content); d.budget < 0 {
		d.exhausted = line
		return false
	}
	if v.Type() == sizeType {
		if n.Kind != yaml.ScalarNode {
			d.probs.add(line, "%s: want a size (e.g. 2MiB), got %s", name, kindName(n))
			return false
		}
		s, err := ParseSize(n.Value)
		if err != nil {
			d.probs.add(line, "%s: %s is not a size (use a number of bytes or e.g. 2MiB)", name, quote.Q(n.Value))
			return false
		}
		v.SetInt(s)
		return true
	}
	switch v.Kind() {
	case reflect.Pointer:
		e := reflect.New(v.Type().Elem())
		if !d.decode(n, e.Elem(), path, name) {
			return false
		}
		v.Set(e)
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			d.probs.add(line, "%s: want a mapping of keys, got %s", name, kindName(n))
			return false
		}
		d.mapping(n, v, path, name)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.probs.add(line, "%s: want a list, got %s", name, kindName(n))
			return false
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			p := path + "/#" + strconv.Itoa(i)
			d.keys[p] = item.Line
			d.decode(item, s.Index(i), p, fmt.Sprintf("%s[%d]", name, i))
		}
		v.Set(s)
	default:
		if n.Kind != yaml.ScalarNode {
			d.probs.add(line, "%s: want %s, got %s", name, want(v.Kind()), kindName(n))
			return false
		}
		return d.scalar(n, v, name)
	}
	return true
}

func want(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "an integer"
}

// scalar sets v from a scalar node of the right type; an integer key refuses a float, a
// string and an integer out of its range.
func (d *decoder) scalar(n *yaml.Node, v reflect.Value, name string) bool {
	bad := func() bool {
		d.probs.add(n.Line, "%s: %s is not %s", name, quote.Q(n.Value), want(v.Kind()))
		return false
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(n.Value) // as written: channels: 3 is "3"
	case reflect.Bool:
		var b bool
		if n.Tag != "!!bool" || n.Decode(&b) != nil {
			return bad()
		}
		v.SetBool(b)
	case reflect.Float32, reflect.Float64:
		var f float64
		if (n.Tag != "!!float" && n.Tag != "!!int") || n.Decode(&f) != nil {
			return bad()
		}
		v.SetFloat(f)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var i int64
		if n.Tag != "!!int" || n.Decode(&i) != nil {
			return bad()
		}
		if v.OverflowInt(i) {
			d.probs.add(n.Line, "%s: %s is too large", name, quote.Q(n.Value))
			return false
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		var u uint64
		if n.Tag != "!!int" || n.Decode(&u) != nil {
			d.probs.add(n.Line, "%s: %s is not a non-negative integer", name, quote.Q(n.Value))
			return false
		}
		if v.OverflowUint(u) {
			d.probs.add(n.Line, "%s: %s is too large", name, quote.Q(n.Value))
			return false
		}
		v.SetUint(u)
	default:
		return bad()
	}
	return true
}

// structKeys maps the yaml keys of a struct type to field indexes, in declaration order.
func structKeys(t reflect.Type) (names []string, index map[string]int) {
	index = map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || tag == "" || tag == "-" {
			continue
		}
		names = append(names, tag)
		index[tag] = i
	}
	return names, index
}

// mapping decodes a mapping node into a struct: unknown and repeated keys are problems.
// Merge keys (<<: *base) apply first; the mapping's own keys override them.
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path, ctx string) {
	names, index := structKeys(v.Type())
	// A field's problems name it: `field "image": ...`.
	if v.Type() == reflect.TypeOf(Field{}) {
		for k := 0; k+1 < len(n.Content); k += 2 {
			if key, val := n.Content[k], d.deref(n.Content[k+1]); key.Value == "name" && val != nil && val.Kind == yaml.ScalarNode && val.Value != "" {
				ctx = "field " + quote.Q(val.Value)
			}
		}
	}
	seen := make(map[string]int, len(n.Content)/2)
	for k := 0; k+1 < len(n.Content); k += 2 {
		key, val := n.Content[k], n.Content[k+1]
		if key.Tag == "!!merge" {
			d.merge(val, v, path, ctx, key.Line)
		}
	}
	for k := 0; k+1 < len(n.Content); k += 2 {
		key, val := n.Content[k], n.Content[k+1]
		if key.Tag == "!!merge" {
			continue
		}
		where := ""
		if ctx != "" {
			where = ctx + ": "
		}
		if key.Kind != yaml.ScalarNode {
			d.probs.add(key.Line, "%sa key must be a plain name, not %s", where, kindName(key))
			continue
		}
		i, known := index[key.Value]
		if !known {
			if d.probs.full() {
				d.probs.total++
			} else {
				d.probs.add(key.Line, "%sunknown key %s%s", where, quote.Q(key.Value), suggest(key.Value, names))
			}
			continue
		}
		if prev, dup := seen[key.Value]; dup {
			d.probs.add(key.Line, "%s is given twice (also line %d)", label(ctx, key.Value), prev)
			continue
		}
		seen[key.Value] = key.Line
		p := key.Value
		if path != "" {
			p = path + "/" + key.Value
		}
		d.keys[p] = key.Line
		if !d.decode(val, v.Field(i), p, label(ctx, key.Value)) {
			delete(d.keys, p) // refused: the default applies, and no second problem for it
			d.keys[refusedMark+p] = key.Line
		}
	}
}

// merge applies a merge key's value: a mapping, or a list of them.
func (d *decoder) merge(val *yaml.Node, v reflect.Value, path, ctx string, line int) {
	val = d.deref(val)
	switch {
	case val == nil:
	case val.Kind == yaml.MappingNode:
		if d.budget -= len(val.Content); d.budget < 0 {
			d.exhausted = line
			return
		}
		d.mapping(val, v, path, ctx)
	case val.Kind == yaml.SequenceNode:
		for _, m := range val.Content {
			if m = d.deref(m); m != nil && m.Kind == yaml.MappingNode {
				d.merge(m, v, path, ctx, line)
			} else {
				d.probs.add(line, "%s<<: a merge key takes a mapping or a list of mappings", ctxPrefix(ctx))
			}
		}
	default:
		d.probs.add(line, "%s<<: a merge key takes a mapping or a list of mappings", ctxPrefix(ctx))
	}
}

func ctxPrefix(ctx string) string {
	if ctx == "" {
		return ""
	}
	return ctx + ": "
}

// suggest returns " (did you mean X?)" naming the known key nearest to key (internal/suggest),
// else the list of known keys.
func suggest(key string, known []string) string {
	if k := suggestpkg.Closest(key, known); k != "" {
		return fmt.Sprintf(" (did you mean %s?)", k)
	}
	return " (known keys: " + strings.Join(known, ", ") + ")"
}

// countNodes counts the nodes of a tree without following aliases.
func countNodes(n *yaml.Node) int {
	c := 1
	for _, k := range n.Content {
		c += countNodes(k)
	}
	return c
}
