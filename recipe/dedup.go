package recipe

import (
	"slices"
	"strconv"

	"github.com/mldf/convert/internal/quote"
)

// DedupModes are the values of dedup.mode ("" is drop).
var DedupModes = []string{"drop", "report"}

// validateDedup checks the dedup key: its fields name output fields (when the recipe lists
// them; a table source's inferred fields are checked by the run), each once, and its mode.
func (r *Recipe) validateDedup(add func(line int, format string, args ...any)) {
	d := r.Dedup
	if d == nil {
		return
	}
	if r.Format == "scdl" {
		add(r.line("dedup"), "dedup does not apply to format scdl (an SCDL archive stores every cell)")
		return
	}
	if r.Shards > 1 {
		add(r.line("dedup"), "dedup does not apply to a sharded run (%d shards): each task sees only its slice, so a duplicate in another slice would stay; run it unsharded", r.Shards)
	}
	if len(d.Fields) == 0 {
		add(r.line("dedup"), "dedup.fields: at least one field is required (the fields whose payloads are compared, e.g. [image])")
	}
	seen := map[string]bool{}
	for i, name := range d.Fields {
		line := r.line("dedup", "fields", "#"+strconv.Itoa(i))
		if seen[name] {
			add(line, "dedup.fields: %s is given twice", quote.Q(name))
			continue
		}
		seen[name] = true
		if len(r.Fields) > 0 && !slices.ContainsFunc(r.Fields, func(f Field) bool { return f.Name == name }) {
			add(line, "dedup.fields: %s is not a field of the recipe", quote.Q(name))
		}
	}
	if d.Mode != "" && !slices.Contains(DedupModes, d.Mode) {
		add(r.line("dedup", "mode"), "dedup.mode: %s is not one of drop, report", quote.Q(d.Mode))
	}
}
