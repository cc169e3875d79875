package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/recipe"
	"github.com/mldf/convert/sources"
)

// shardFromEnv fills r.Shard and r.Shards from the scheduler when neither the flags nor the
// recipe set them: the task index from SLURM_ARRAY_TASK_ID (minus SLURM_ARRAY_TASK_MIN) or
// JOB_COMPLETION_INDEX (Kubernetes Indexed Job), the count from SLURM_ARRAY_TASK_COUNT
// (Kubernetes does not export it: pass --shards).
func shardFromEnv(r *recipe.Recipe, rf *runFlags, lookup func(string) (string, bool)) error {
	num := func(name string) (int, bool, error) {
		v, ok := lookup(name)
		if !ok || v == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, false, fmt.Errorf("%s=%q is not a task index", name, v)
		}
		return n, true, nil
	}
	if r.Shards == 0 {
		n, ok, err := num("SLURM_ARRAY_TASK_COUNT")
		if err != nil {
			return err
		}
		if ok {
			r.Shards = n
		}
	}
	explicit := rf.shard >= 0 || r.Shard != 0
	if rf.shard >= 0 {
		r.Shard = rf.shard
	}
	if explicit {
		return nil
	}
	id, ok, err := num("SLURM_ARRAY_TASK_ID")
	if err != nil {
		return err
	}
	if ok {
		lo, _, err := num("SLURM_ARRAY_TASK_MIN")
		if err != nil {
			return err
		}
		r.Shard = id - lo
	} else if id, ok, err = num("JOB_COMPLETION_INDEX"); err != nil {
		return err
	} else if ok {
		r.Shard = id
	} else {
		return nil
	}
	if r.Shards == 0 {
		return fmt.Errorf("task index %d comes from the scheduler but the number of tasks is unknown: pass --shards N (Kubernetes does not export it)", r.Shard)
	}
	return nil
}

// partPath names task i's part of n: OUT.part-00003-of-00008.mldf for OUT.mldf.
func partPath(output string, i, n int) string {
	ext := ".mldf"
	base := output
	if dot := strings.LastIndexByte(output, '.'); dot > strings.LastIndexByte(output, '/') {
		base, ext = output[:dot], output[dot:]
	}
	return fmt.Sprintf("%s.part-%05d-of-%05d%s", base, i, n, ext)
}

// doneRecord is the completion record a task writes after its part: a re-run whose inputs and
// recipe match it does nothing.
type doneRecord struct {
	Part           string       `json:"part"`
	Shard          int          `json:"shard"`
	Shards         int          `json:"shards"`
	RecipeSHA256   string       `json:"recipe_sha256"`
	Inputs         inputsRecord `json:"inputs"`
	Samples        int64        `json:"samples"`
	Rejected       int64        `json:"rejected"`
	Checksum       string       `json:"checksum"` // the part's header xxhash64
	ElapsedSeconds float64      `json:"elapsed_seconds"`
	Version        string       `json:"version"`
}

// inputsRecord identifies a task's inputs without listing them (a slice of an image folder
// may hold millions of files): their count, bytes and the SHA-256 of their paths and sizes.
type inputsRecord struct {
	Count  int64  `json:"count"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// sliceInputs describes inputs [lo, hi) of list.
func sliceInputs(list sources.InputList, lo, hi int) (inputsRecord, error) {
	h := sha256.New()
	var rec inputsRecord
	var num [8]byte
	err := list.Each(func(i int64, in sources.Input) error {
		if i < int64(lo) || i >= int64(hi) {
			return nil
		}
		rec.Count++
		rec.Bytes += in.Size
		binary.LittleEndian.PutUint64(num[:], uint64(len(in.Path)))
		h.Write(num[:])
		io.WriteString(h, in.Path)
		binary.LittleEndian.PutUint64(num[:], uint64(in.Size))
		h.Write(num[:])
		return nil
	})
	rec.SHA256 = hex.EncodeToString(h.Sum(nil))
	return rec, err
}

// partChecksum returns the header checksum of a complete, valid part. A part in a bucket
// exists only once its upload completed; its header is read with one ranged request.
func partChecksum(ctx context.Context, st *storage, path string) (string, int64, error) {
	r, err := openMLDF(ctx, st.client, path)
	if err != nil {
		return "", 0, err
	}
	defer r.Close()
	return fmt.Sprintf("%016x", r.Header().Checksum), int64(r.NumSamples()), nil
}

// shardRecipeHash is the recipe hash every task of one sharded run shares: the resolved recipe
// without the options that differ between tasks but not in what they write.
func shardRecipeHash(r *recipe.Recipe) string {
	rr := *r
	rr.Shard, rr.Workers, rr.LogFormat, rr.ChunkSize = 0, 0, "", 0
	rr.CheckpointEvery, rr.CheckpointBytes = "", 0 // how often a run checkpoints, not what it writes
	rr.DirectIO = nil                              // how the output is written, not what
	return recipeHash(&rr)
}

// upToDate reports whether the task's record matches this run and its part is intact, and
// returns the record.
func upToDate(ctx context.Context, st *storage, rec doneRecord, recPath string) (doneRecord, bool) {
	b, err := st.readSmall(ctx, recPath)
	if err != nil {
		return doneRecord{}, false
	}
	var old doneRecord
	if json.Unmarshal(b, &old) != nil || old.RecipeSHA256 != rec.RecipeSHA256 || old.Inputs != rec.Inputs {
		return doneRecord{}, false
	}
	sum, _, err := partChecksum(ctx, st, rec.Part)
	return old, err == nil && sum == old.Checksum
}

// shardReport and shardRejects name a sharded task's report and rejects log, beside its part.
func shardReport(part string) string  { return part + ".report.json" }
func shardRejects(part string) string { return part + ".rejects.jsonl" }

// runShard converts this task's slice into its part file and writes the completion record.
func runShard(ctx context.Context, st *storage, plan *recipe.Plan, logger *slog.Logger, stdout, stderr io.Writer, asJSON bool) error {
	r := plan.Recipe
	part := partPath(r.Output, r.Shard, r.Shards)
	inputs, err := sliceInputs(plan.Inputs, plan.Slice[0], plan.Slice[1])
	if err != nil {
		return fmt.Errorf("inputs of %s: %w", part, err)
	}
	rec := doneRecord{Part: part, Shard: r.Shard, Shards: r.Shards, RecipeSHA256: shardRecipeHash(r),
		Inputs: inputs, Version: version}
	recPath := part + ".done"
	if old, ok := upToDate(ctx, st, rec, recPath); ok {
		if asJSON {
			s := newSummaryJSON(pipeline.Report{Output: part, Samples: old.Samples, Rejected: old.Rejected}, shardRejects(part))
			s.UpToDate = true
			if err := writeJSONLine(stdout, s); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(stdout, "%s is up to date (%s matches its inputs); nothing to do\n", part, recPath)
			fmt.Fprintf(stdout, "%s rejected\n", plural(old.Rejected, "sample"))
		}
		rr := *r
		rr.Rejects = shardRejects(part) // where this task's rejects are, not the merged output's
		return rejectsAccepted(&rr, old.Rejected)
	}
	// A stale record must not outlive a part we are about to replace.
	if err := st.client.Remove(ctx, recPath); err != nil {
		return err
	}
	shardPlan := *plan
	rr := *r
	rr.Report = shardReport(part)
	rr.Rejects = shardRejects(part)
	shardPlan.Recipe = &rr
	start := time.Now()
	rep, err := runPlan(ctx, st, &shardPlan, part, logger, stderr, nil)
	if werr := writeReport(ctx, st, &shardPlan, rep, err); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	if rec.Checksum, rec.Samples, err = partChecksum(ctx, st, part); err != nil {
		return fmt.Errorf("part %s: %w", part, err)
	}
	rec.ElapsedSeconds = time.Since(start).Seconds()
	rec.Rejected = rep.Rejected
	if err := writeFileAtomic(ctx, st, recPath, rec); err != nil {
		return err
	}
	if err := printSummary(stdout, rep, rr.Rejects, asJSON); err != nil {
		return err
	}
	return rejectsAccepted(&rr, rep.Rejected)
}
