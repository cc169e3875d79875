package merge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mldf/convert/objstore"
)

// PartPath names part i of n of the output out: OUT.part-00003-of-00008.mldf for OUT.mldf.
// It is the name `convert run --shard I --shards N` writes.
func PartPath(out string, i, n int) string {
	base, ext := splitExt(out)
	return fmt.Sprintf("%s.part-%05d-of-%05d%s", base, i, n, ext)
}

// splitExt splits "dir/x.mldf" into "dir/x" and ".mldf"; a name without an extension gets
// ".mldf", as the run command does.
func splitExt(path string) (base, ext string) {
	ext = ".mldf"
	base = path
	if dot := strings.LastIndexByte(path, '.'); dot > strings.LastIndexByte(path, '/') {
		base, ext = path[:dot], path[dot:]
	}
	return base, ext
}

var partRE = regexp.MustCompile(`^(.*)\.part-([0-9]{5,9})-of-([0-9]{5,9})(\.[^./]*)?$`)

// ParsePartName parses a part file name made by PartPath. It returns the output the part
// belongs to, its index and the number of parts.
func ParsePartName(path string) (out string, index, count int, err error) {
	m := partRE.FindStringSubmatch(path)
	if m == nil {
		return "", 0, 0, fmt.Errorf("%w: %s (want OUT.part-IIIII-of-NNNNN.mldf)", ErrPartName, path)
	}
	index, _ = strconv.Atoi(m[2]) // at most 9 digits: cannot fail or overflow
	count, _ = strconv.Atoi(m[3])
	if count == 0 || index >= count {
		return "", 0, 0, fmt.Errorf("%w: %s: part %d of %d", ErrPartName, path, index, count)
	}
	ext := m[4]
	if ext == "" {
		ext = ".mldf"
	}
	return m[1] + ext, index, count, nil
}

// FindParts returns the part files of out (OUT.part-*-of-*.mldf beside it), in index order.
// It fails when none exist or when parts of different part counts lie there (the leftovers
// of an earlier run with another number of tasks), naming them.
func FindParts(out string) ([]string, error) {
	base, ext := splitExt(out)
	matches, err := filepath.Glob(globEscape(base) + ".part-*-of-*" + globEscape(ext))
	if err != nil {
		return nil, fmt.Errorf("find parts of %s: %w", out, err)
	}
	byCount := map[int][]string{}
	for _, m := range matches {
		if _, _, n, err := ParsePartName(m); err == nil {
			byCount[n] = append(byCount[n], m)
		}
	}
	switch len(byCount) {
	case 0:
		return nil, fmt.Errorf("%w: no part files %s.part-*-of-*%s", ErrMissingPart, base, ext)
	case 1:
		for _, ps := range byCount {
			sort.Strings(ps) // zero-padded indices: lexical order is index order
			return ps, nil
		}
	}
	counts := make([]string, 0, len(byCount))
	for n, ps := range byCount {
		counts = append(counts, fmt.Sprintf("%d parts of %d (e.g. %s)", len(ps), n, ps[0]))
	}
	sort.Strings(counts)
	return nil, fmt.Errorf("%w: parts of runs with different task counts lie beside %s: %s; list the parts to merge or remove the stale ones",
		ErrIncompatible, out, strings.Join(counts, "; "))
}

func globEscape(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
}

// Record is the completion record (PART.done, JSON) a task writes after its part. The
// command's run writes it; Merge reads it.
type Record struct {
	Part           string          `json:"part"`
	Shard          int             `json:"shard"`
	Shards         int             `json:"shards"`
	RecipeSHA256   string          `json:"recipe_sha256"`
	Inputs         json.RawMessage `json:"inputs"`
	Samples        int64           `json:"samples"`
	Checksum       string          `json:"checksum"` // the part's header xxhash64, 16 hex digits
	ElapsedSeconds float64         `json:"elapsed_seconds"`
	Version        string          `json:"version"`
}

// maxRecordSize bounds a completion record read from disk (they list the task's inputs).
const maxRecordSize = 256 << 20

// ReadRecord reads and decodes the completion record at path (a local path or a bucket URL)
// through c.
func ReadRecord(ctx context.Context, c *objstore.Client, path string) (Record, error) {
	b, err := c.ReadFile(ctx, path, maxRecordSize)
	switch {
	case errors.Is(err, objstore.ErrNotFound):
		return Record{}, fmt.Errorf("%w: %s does not exist: the task did not finish (or was killed); re-run it", ErrIncomplete, path)
	case errors.Is(err, objstore.ErrTooLarge), errors.Is(err, objstore.ErrBadURL):
		return Record{}, fmt.Errorf("%w: %s is not a completion record: %w", ErrRecord, path, err)
	case err != nil:
		return Record{}, err
	}
	return ParseRecord(path, b)
}

// ParseRecord decodes a completion record; name is used in errors.
func ParseRecord(name string, b []byte) (Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, fmt.Errorf("%w: %s: %w", ErrRecord, name, err)
	}
	if _, err := r.checksum(); err != nil {
		return Record{}, fmt.Errorf("%w: %s: %w", ErrRecord, name, err)
	}
	if r.Samples < 0 || r.Shards < 0 || r.Shard < 0 {
		return Record{}, fmt.Errorf("%w: %s: negative count (samples %d, shard %d of %d)", ErrRecord, name, r.Samples, r.Shard, r.Shards)
	}
	return r, nil
}

func (r Record) checksum() (uint64, error) {
	if len(r.Checksum) == 0 || len(r.Checksum) > 16 {
		return 0, fmt.Errorf("checksum %q is not 1..16 hex digits", r.Checksum)
	}
	v, err := strconv.ParseUint(r.Checksum, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("checksum %q is not hex", r.Checksum)
	}
	return v, nil
}
