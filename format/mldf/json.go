package mldf

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// MaxJSONDepth is the deepest nesting of arrays and objects a JSON payload may have
// (docs/FORMAT.md rule D3): `1` and `"s"` have depth 0, `[]` and `{}` depth 1, `[[1]]` depth 2.
// The writer refuses deeper values (a per-sample error) and every reader refuses deeper
// payloads, so that no reader needs more than this much recursion (Python's json module
// recurses once per level and stops near 1000).
const MaxJSONDepth = 512

// JSONDepth returns the deepest nesting of arrays and objects in b, counting the brackets
// outside strings. It stops counting, and returns a value larger than limit, as soon as the
// depth exceeds limit (limit <= 0 means no limit). b need not be valid JSON: the result is
// then meaningless but the scan still ends in O(len(b)) without allocating.
func JSONDepth(b []byte, limit int) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
			if depth > deepest {
				deepest = depth
				if limit > 0 && deepest > limit {
					return deepest
				}
			}
		case ']', '}':
			depth--
		}
	}
	return deepest
}

// CheckJSON applies rule D3 to a JSON payload: UTF-8 text holding one JSON value (RFC 8259)
// nested at most MaxJSONDepth deep. The error is a *FieldError.
func CheckJSON(b []byte) error {
	if d := JSONDepth(b, MaxJSONDepth); d > MaxJSONDepth {
		return fieldErr("D3", "JSON nested more than %d levels deep (at most %d)", MaxJSONDepth, MaxJSONDepth)
	}
	if !utf8.Valid(b) {
		return fieldErr("D3", "JSON payload is not UTF-8")
	}
	if !json.Valid(b) {
		var v any
		err := json.Unmarshal(b, &v)
		return fieldErr("D3", "JSON payload does not parse: %v", err)
	}
	return nil
}

// CheckUTF8 applies rule D4 to UTF-8 text (TEXT_* encoding 0). The error is a *FieldError.
func CheckUTF8(b []byte) error {
	if utf8.Valid(b) {
		return nil
	}
	off := 0
	for off < len(b) {
		r, n := utf8.DecodeRune(b[off:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		off += n
	}
	return fieldErr("D4", "text is not UTF-8: invalid byte %#02x at offset %d", b[off], off)
}

// fieldErr builds a *FieldError.
func fieldErr(rule, format string, args ...any) *FieldError {
	return &FieldError{Rule: rule, Msg: fmt.Sprintf(format, args...)}
}
