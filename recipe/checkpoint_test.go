package recipe

import (
	"strings"
	"testing"
)

func TestCheckpointKeys(t *testing.T) {
	const head = "source: {type: jsonl, inputs: [a]}\nfields: [{name: n, type: int}]\noutput: o\n"
	for _, c := range []struct{ name, src, want string }{
		{"none", head, ""},
		{"every", head + "checkpoint_every: 2m\n", ""},
		{"off", head + "checkpoint_every: 0\n", ""},
		{"bytes", head + "checkpoint_bytes: 256MiB\n", ""},
		{"both", head + "checkpoint_every: 10s\ncheckpoint_bytes: 1073741824\n", ""},
		{"not a duration", head + "checkpoint_every: often\n", `line 4: checkpoint_every "often" is not a duration >= 0`},
		{"no unit", head + "checkpoint_every: 30\n", `line 4: checkpoint_every "30" is not a duration`},
		{"negative", head + "checkpoint_every: -1s\n", `line 4: checkpoint_every "-1s" is not a duration >= 0`},
		{"zero bytes", head + "checkpoint_bytes: 0\n", "line 4: checkpoint_bytes must be a size > 0"},
		{"bad size", head + "checkpoint_bytes: lots\n", `"lots" is not a size`},
		{"nested", head + "checkpoint: {every: 30s}\n", `unknown key "checkpoint"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Parse([]byte(c.src), env(nil))
			if err == nil {
				r.Defaults()
				err = r.Validate()
			}
			if c.want == "" {
				if err != nil {
					t.Fatalf("want no error, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error with %q, got %v", c.want, err)
			}
		})
	}
}
