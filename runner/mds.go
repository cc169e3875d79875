package runner

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mldf/convert/export"
	"github.com/mldf/convert/format/mds"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/atomicfile"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/sources"
)

// MDSCheckpointSuffix names the checkpoint record of a resumable MDS output's export phase,
// beside the output directory: ".DIR.mds-checkpoint".
const MDSCheckpointSuffix = ".mds-checkpoint"

// mdsRecordVersion is the layout of the record; another layout is not resumed.
const mdsRecordVersion = 1

// mdsRecord is the checkpoint of the export phase of an MDS output: the conversion into the
// MLDF file is complete (its report and size), and the shards listed are finished.
type mdsRecord struct {
	Version int              `json:"version"`
	Print   string           `json:"print"` // mdsPrint of the run
	MLDF    int64            `json:"mldf_bytes"`
	Report  pipeline.Report  `json:"report"`
	Shards  []mds.ShardState `json:"shards"`
}

// runMDS converts into an MLDF file beside the output and exports it as an MDS dataset
// (format/mds): the output is a directory of shards and index.json, which appears last. The
// MLDF file is removed when the run ends, unless it is interrupted with a checkpoint.
//
// With cfg.Resume both phases resume (docs/RESUME.md): the conversion into the MLDF file
// checkpoints as any MLDF output does; once it is complete a record beside the output
// (".DIR.mds-checkpoint") holds the run's fingerprint and report, and gains each shard as
// it is finished (its name, size, samples and SHA-256). A restarted run with that record
// skips the conversion, checks the finished shards and exports the rest.
//
// knobs, nil but in tests, sets the shard size and observes the shards.
func runMDS(ctx context.Context, cfg pipeline.Config, knobs *mdsKnobs) (pipeline.Report, error) {
	if knobs == nil {
		knobs = &mdsKnobs{}
	}
	dir := cfg.Output
	cfg = mldfStage(cfg)
	tmp := cfg.Output
	if cfg.Resume == nil {
		if err := clearMDSDir(dir); err != nil {
			return pipeline.Report{}, err
		}
		defer os.Remove(tmp)
		rep, err := pipeline.Run(ctx, cfg)
		if err != nil {
			return rep, err
		}
		return exportMDS(ctx, rep, tmp, dir, export.MDSOptions{SizeLimit: knobs.sizeLimit})
	}
	res := cfg.Resume
	say := func(msg string) {
		if res.Log != nil {
			fmt.Fprintln(res.Log, "convert: "+msg)
		} else if cfg.Logger != nil {
			cfg.Logger.Info(msg)
		}
	}
	recPath := atomicfile.PartialName(dir, MDSCheckpointSuffix)
	fp, err := mdsPrint(res.Fingerprint)
	if err != nil {
		return pipeline.Report{}, fmt.Errorf("inputs of %s: %w", dir, err)
	}
	rec, why := readMDSRecord(recPath, fp, tmp, res.Restart)
	if why != "" {
		say(fmt.Sprintf("%s: starting over: %s", dir, why))
	}
	if rec == nil {
		// The shards of a killed export of another recipe (or of a damaged record) go.
		if _, err := os.Stat(recPath); err == nil {
			removeShards(dir)
			os.Remove(tmp)
			os.Remove(recPath)
		}
		if err := clearMDSDir(dir); err != nil {
			return pipeline.Report{}, err
		}
		rep, err := pipeline.Run(ctx, cfg)
		if err != nil {
			return rep, err
		}
		fi, err := os.Stat(tmp)
		if err != nil {
			return rep, fmt.Errorf("mds output %s: %w", dir, err)
		}
		rec = &mdsRecord{Version: mdsRecordVersion, Print: fp, MLDF: fi.Size(), Report: rep}
		if err := writeMDSRecord(recPath, rec); err != nil {
			os.Remove(tmp)
			return rep, fmt.Errorf("mds output %s: checkpoint: %w", dir, err)
		}
	} else {
		var n int64
		for _, s := range rec.Shards {
			n += s.Samples
		}
		say(fmt.Sprintf("%s: resumed the export after its %d finished shards (%d samples); the conversion was complete", dir, len(rec.Shards), n))
	}
	opt := export.MDSOptions{SizeLimit: knobs.sizeLimit, Resume: true, Done: rec.Shards, OnShard: func(s mds.ShardState) error {
		rec.Shards = append(rec.Shards, s)
		if err := writeMDSRecord(recPath, rec); err != nil {
			return err
		}
		if knobs.afterShard != nil {
			knobs.afterShard(len(rec.Shards))
		}
		return nil
	}}
	rep, err := exportMDS(ctx, rec.Report, tmp, dir, opt)
	if err != nil && ctx.Err() != nil {
		return rep, err // interrupted: the record, the MLDF file and the shards stay
	}
	if err != nil && errors.Is(err, mds.ErrResume) {
		say(fmt.Sprintf("%s: starting over: the finished shards cannot be continued: %v", dir, err))
		removeShards(dir)
		rec.Shards = nil
		opt.Done = nil
		rep, err = exportMDS(ctx, rec.Report, tmp, dir, opt)
		if err != nil && ctx.Err() != nil {
			return rep, err
		}
	}
	os.Remove(recPath)
	os.Remove(tmp)
	return rep, err
}

// mldfStage returns the configuration of an MDS output's first phase: the conversion into
// the MLDF file beside the output (DIR.mldf.tmp). That file is read back right after it is
// written, so it goes through the page cache (where it is still found), not around it.
func mldfStage(cfg pipeline.Config) pipeline.Config {
	cfg.Output += ".mldf.tmp"
	cfg.NoDirect = true
	return cfg
}

// mdsKnobs are runMDS's test settings: the shard size (0: the default) and a function called
// after each shard is recorded with the count of shards so far.
type mdsKnobs struct {
	sizeLimit  int64
	afterShard func(shards int)
}

// exportMDS exports the MLDF file tmp as the MDS dataset dir, completing rep.
func exportMDS(ctx context.Context, rep pipeline.Report, tmp, dir string, opt export.MDSOptions) (pipeline.Report, error) {
	r, err := mldf.Open(tmp)
	if err != nil {
		return rep, fmt.Errorf("mds output %s: %w", dir, err)
	}
	defer r.Close()
	res, err := export.MDS(ctx, r, dir, opt)
	if err != nil {
		return rep, fmt.Errorf("mds output %s: %w", dir, err)
	}
	rep.Output, rep.BytesOut = dir, res.Bytes
	return rep, nil
}

// readMDSRecord returns the export checkpoint to resume, or nil and why not ("" when there
// is none).
func readMDSRecord(path, fp, tmp string, restart bool) (*mdsRecord, string) {
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, ""
	case restart:
		return nil, "--restart discards the checkpoint " + path
	case err != nil:
		return nil, fmt.Sprintf("the checkpoint %s cannot be read: %v", path, err)
	}
	var rec mdsRecord
	if err := json.Unmarshal(b, &rec); err != nil || rec.Version != mdsRecordVersion {
		return nil, fmt.Sprintf("the checkpoint %s is damaged or of another layout", path)
	}
	if rec.Print != fp {
		return nil, "the recipe, the inputs or the tool changed since the checkpoint"
	}
	if fi, err := os.Stat(tmp); err != nil || fi.Size() != rec.MLDF {
		return nil, fmt.Sprintf("the converted file %s is missing or not the one of the checkpoint", tmp)
	}
	return &rec, ""
}

func writeMDSRecord(path string, rec *mdsRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b, 0o644)
}

// clearMDSDir prepares the output directory of a run that starts from its first sample: it
// must be absent or empty, or hold an MDS dataset (index.json and shards only, and the
// temporary files of shards: an earlier run's, or one killed after its index was written),
// which is removed, as an MLDF output replaces the file at its path. Anything else there is
// refused: a run never removes a user's other files.
func clearMDSDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) == 0 {
		return nil // absent (or unreadable: the export says why)
	}
	index := false
	for _, e := range ents {
		switch name := e.Name(); {
		case !e.Type().IsRegular():
			return fmt.Errorf("mds output %s: %w: it holds %s, not only an MDS dataset; remove it or pick another directory",
				dir, export.ErrDirNotEmpty, quote.S(name))
		case name == mds.IndexName:
			index = true
		case strings.HasPrefix(name, ".") && strings.Contains(name, ".mds.tmp-"):
			// a shard's temporary file, left by a killed run
		case !isShardName(name):
			return fmt.Errorf("mds output %s: %w: it holds %s, not only an MDS dataset; remove it or pick another directory",
				dir, export.ErrDirNotEmpty, quote.S(name))
		}
	}
	if !index {
		return fmt.Errorf("mds output %s: %w: shards without %s (a killed run's without a checkpoint?); remove them or pick another directory",
			dir, export.ErrDirNotEmpty, mds.IndexName)
	}
	for _, e := range ents {
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("mds output %s: replace the dataset there: %w", dir, err)
		}
	}
	return nil
}

// isShardName reports whether name is a shard's: "shard." digits ".mds".
func isShardName(name string) bool {
	mid, ok := strings.CutPrefix(name, "shard.")
	if !ok {
		return false
	}
	if mid, ok = strings.CutSuffix(mid, ".mds"); !ok || len(mid) < 5 {
		return false
	}
	for _, c := range mid {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// removeShards removes what a killed export left in dir: its shards (numbered from 0, up to
// the first missing two in a row), their temporary files and index.json.
func removeShards(dir string) {
	for i, gap := 0, 0; gap < 2; i++ {
		atomicfile.RemoveLeftovers(dir, mds.ShardName(i))
		if os.Remove(filepath.Join(dir, mds.ShardName(i))) != nil {
			gap++
		} else {
			gap = 0
		}
	}
	os.Remove(filepath.Join(dir, mds.IndexName))
}

// mdsPrint is what an export checkpoint must match: the SHA-256 of the recipe's hash, the
// tool's version and the inputs (each path's length, path and size, little-endian).
func mdsPrint(f pipeline.Fingerprint) (string, error) {
	h := sha256.New()
	var num [8]byte
	for _, s := range []string{f.Recipe, f.Version} {
		binary.LittleEndian.PutUint64(num[:], uint64(len(s)))
		h.Write(num[:])
		io.WriteString(h, s)
	}
	if f.Inputs != nil {
		err := f.Inputs.Each(func(_ int64, in sources.Input) error {
			binary.LittleEndian.PutUint64(num[:], uint64(len(in.Path)))
			h.Write(num[:])
			io.WriteString(h, in.Path)
			binary.LittleEndian.PutUint64(num[:], uint64(in.Size))
			h.Write(num[:])
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
