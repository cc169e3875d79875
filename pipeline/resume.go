package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"sync/atomic"
	"time"

	"github.com/mldf/convert/internal/atomicfile"
	"github.com/mldf/convert/internal/dedup"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/sources"
)

// Defaults of Resume: a checkpoint every 30 seconds or every GiB of payloads written,
// whichever comes first.
const (
	DefaultCheckpointEvery = 30 * time.Second
	DefaultCheckpointBytes = 1 << 30
)

// CheckpointSuffix names a resumable run's checkpoint record beside its output:
// ".BASE.checkpoint".
const CheckpointSuffix = ".checkpoint"

// checkpointVersion is the layout of the record; a record of another layout is not resumed.
const checkpointVersion = 1

// ErrCheckpoint is a checkpoint record that cannot be used (damaged, another layout).
var ErrCheckpoint = errors.New("pipeline: unusable checkpoint")

// Resume makes a run resumable (docs/RESUME.md): its output and scratch files are named
// hidden files beside the output, made durable at a chunk boundary every Every or every
// Bytes of payloads, with a checkpoint record (".BASE.checkpoint", written atomically)
// of the writer's and the run's state and the source's place. A run started again with the
// same Fingerprint continues from the last checkpoint, and its output is byte-identical to
// an uninterrupted run's; with another fingerprint it starts over, saying why.
//
// A run that writes to a bucket (Config.Sink) keeps its record and files under State, and
// continues the upload the record names through Reattach; without them, and a run that
// dedups with a table of the caller's (Dedup.Table), is not resumable: it runs as without
// Resume, after saying so. A run that dedups otherwise keeps its dedup table beside the output
// (".BASE.partial-dedup-*", dedup.Config.Durable) and records it with each checkpoint. A
// rejects file bound for a bucket is kept locally until the commit (rejectsPartial).
type Resume struct {
	// Fingerprint identifies what the run writes.
	Fingerprint Fingerprint
	// Every and Bytes space the checkpoints; 0 means the defaults, < 0 never by that measure.
	Every time.Duration
	Bytes int64
	// Restart discards a checkpoint and the partial files of an earlier run: a fresh start
	// (which checkpoints too).
	Restart bool
	// Log, when set, receives the lines a person reads: why the run starts over, where it
	// resumed. (Config.Logger receives them too.)
	Log io.Writer
	// State, for an output in a bucket (Config.Sink), is the local path that stands for the
	// output: the record and the partial files are named after it (".BASE.checkpoint",
	// ".BASE.partial" holding the bytes not yet in uploaded parts, the spills).
	State string
	// Reattach, for an output in a bucket, reattaches the upload a checkpoint recorded and
	// checks its parts (objstore Client.ResumeUpload, multipart.Resume), returning the sink
	// continuing it. An error (the upload is gone, its parts differ) starts the run over,
	// saying why; Reattach has then aborted what it could.
	Reattach func(ctx context.Context, u pagewriter.UploadState) (pagewriter.SinkOpener, error)
}

// Fingerprint is what must match for a run to resume a checkpoint: the recipe's hash, the
// tool's version and the inputs (hashed as a sharded run's .done record does: the paths and
// sizes, in order).
type Fingerprint struct {
	Recipe  string
	Version string
	Inputs  sources.InputList
}

// inputsPrint is a fingerprint's inputs: their count, bytes and SHA-256 (of each path's
// length, path and size, little-endian, as the .done record), and the first ones listed so
// a changed input can be named.
type inputsPrint struct {
	Count  int64           `json:"count"`
	Bytes  int64           `json:"bytes"`
	SHA256 string          `json:"sha256"`
	Files  []sources.Input `json:"files,omitempty"`
}

// namedInputs is how many inputs a record lists by name.
const namedInputs = 1000

func printInputs(list sources.InputList) (inputsPrint, error) {
	var p inputsPrint
	if list == nil {
		return p, nil
	}
	h := sha256.New()
	var num [8]byte
	err := list.Each(func(i int64, in sources.Input) error {
		p.Count++
		p.Bytes += in.Size
		binary.LittleEndian.PutUint64(num[:], uint64(len(in.Path)))
		h.Write(num[:])
		io.WriteString(h, in.Path)
		binary.LittleEndian.PutUint64(num[:], uint64(in.Size))
		h.Write(num[:])
		if i < namedInputs {
			p.Files = append(p.Files, in)
		}
		return nil
	})
	p.SHA256 = hex.EncodeToString(h.Sum(nil))
	return p, err
}

// checkpoint is the record: what a resumed run restores.
type checkpoint struct {
	Version int         `json:"version"`
	Tool    string      `json:"tool"`
	Recipe  string      `json:"recipe_sha256"`
	Inputs  inputsPrint `json:"inputs"`
	Number  int64       `json:"number"` // checkpoints of the output so far, from 1
	Time    time.Time   `json:"time"`
	// The source's place: samples consumed, and its token (sources.Resumer).
	Samples int64  `json:"samples"`
	Token   []byte `json:"token,omitempty"`
	// The writer's state (pagewriter.State) and the lengths of its files.
	Cursor   int64 `json:"cursor"`
	Rows     int64 `json:"rows"`
	Entries  int64 `json:"entries"`
	Payloads int64 `json:"payload_bytes"`
	// The run's counters.
	BytesIn    int64            `json:"bytes_in"`
	Rejected   int64            `json:"rejected"`
	Filtered   int64            `json:"filtered"`
	Fields     [][2]int64       `json:"fields"`
	ByReason   map[string]int64 `json:"by_reason,omitempty"`
	Lead       bool             `json:"lead"`
	LeadN      int64            `json:"lead_n"`
	LeadReason string           `json:"lead_reason,omitempty"`
	LeadField  string           `json:"lead_field,omitempty"`
	Logged     int              `json:"logged"`
	// Upload is the state of the output's upload (an output in a bucket).
	Upload *pagewriter.UploadState `json:"upload,omitempty"`
	// RejectsLen is the length of the rejects file so far.
	RejectsLen int64 `json:"rejects_len"`
	// Duplicates is the run's count of duplicates; Dedup the dedup table's files (a run
	// with Config.Dedup).
	Duplicates int64        `json:"duplicates"`
	Dedup      *dedup.State `json:"dedup,omitempty"`
	// Check is the SHA-256 of the record with Check empty: a damaged record is not used.
	Check string `json:"check"`
	seq   int64  // the chunk the checkpoint is taken at (not recorded)
}

func (c *checkpoint) sum() string {
	cc := *c
	cc.Check = ""
	b, _ := json.Marshal(&cc)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// checkpointer is a resumable run's state (nil on a run without Resume).
type checkpointer struct {
	cfg     Resume
	path    string // the record
	print   inputsPrint
	from    *checkpoint // the checkpoint resumed, or nil
	number  int64
	due     atomic.Bool
	bytes   int64 // payload bytes since the last checkpoint (baton-owned)
	snaps   chan *checkpoint
	rejects *os.File // the rejects file of a local RejectsPath (see rejectsFile)
	// The dedup table reopened from the checkpoint (for openDedup), and the files of runs
	// the table merged away, removed once a record no longer names them.
	table   *dedup.Table
	garbage []string
}

// say writes a line for a person to Resume.Log, or logs it when there is none.
func (r *runner) say(msg string, args ...any) {
	if r.ck != nil && r.ck.cfg.Log != nil {
		fmt.Fprintln(r.ck.cfg.Log, "convert: "+msg)
		return
	}
	r.log.Info(msg, args...)
}

// notResumable says why a run with Resume is not resumable; it runs as without it.
func notResumable(cfg *Config) string {
	switch {
	case cfg.Sink != nil && (cfg.Resume.State == "" || cfg.Resume.Reattach == nil):
		return "the output is not a local file and no local state directory was given"
	case cfg.Dedup != nil && cfg.Dedup.Table != nil:
		return "dedup uses a table given by the caller (an append's), which is not checkpointed"
	}
	return ""
}

// localPath reports whether name is a plain local path (not a URL, not even file://: the
// resumable rejects file is opened with the os package).
func localPath(name string) bool {
	p, ok := objstore.TargetOf(name).Path()
	return ok && p == name
}

// dedupName is the name prefix of a resumable run's dedup table files beside local:
// ".BASE.partial-dedup-origins", "-prefixes" and "-run-N".
func dedupName(local string) string { return atomicfile.PartialName(local, dedupSuffix) }

const dedupSuffix = ".partial-dedup"

// dedupConfig is the configuration of a resumable run's dedup table: the same in every run
// of the output (the filter's size depends on Expected).
func (r *runner) dedupConfig() dedup.Config {
	return dedup.Config{Durable: dedupName(r.local()), Expected: max(r.total, 0), Memory: r.cfg.Dedup.Memory}
}

// local is the path the resumable run's record and partial files are named after: the
// output, or Resume.State for an output in a bucket.
func (r *runner) local() string {
	if r.cfg.Sink != nil {
		return r.cfg.Resume.State
	}
	return r.cfg.Output
}

// openResume prepares a resumable run: it reads the checkpoint record, and either restores
// the state it records (the counters, the source from its place) and returns the writer's
// state, or explains why the run starts over and removes what the earlier run left.
func (r *runner) openResume(ctx context.Context) (*pagewriter.State, error) {
	cfg := r.cfg.Resume
	local := r.local()
	ck := &checkpointer{cfg: *cfg, path: atomicfile.PartialName(local, CheckpointSuffix), snaps: make(chan *checkpoint, 1)}
	if ck.cfg.Every == 0 {
		ck.cfg.Every = DefaultCheckpointEvery
	}
	if ck.cfg.Bytes == 0 {
		ck.cfg.Bytes = DefaultCheckpointBytes
	}
	if p := pagewriter.PartialFiles(local)[0]; atomicfile.Busy(p) {
		return nil, fmt.Errorf("%s: %w: another run is writing it (%s is locked)", r.cfg.Output, atomicfile.ErrBusy, p)
	}
	r.ck = ck
	var err error
	if ck.print, err = printInputs(cfg.Fingerprint.Inputs); err != nil {
		return nil, fmt.Errorf("inputs of %s: %w", r.cfg.Output, err)
	}
	old, why := ck.read(local, cfg)
	if old != nil && len(old.Fields) != len(r.cfg.Fields) {
		old, why = nil, fmt.Sprintf("the checkpoint has %d fields, the run %d", len(old.Fields), len(r.cfg.Fields))
	}
	if old != nil && old.RejectsLen > 0 && r.cfg.RejectsPath != "" {
		p := rejectsPartial(local, r.cfg.RejectsPath)
		if fi, err := os.Stat(p); err != nil || fi.Size() < old.RejectsLen {
			old, why = nil, fmt.Sprintf("the partial rejects file %s is missing or shorter than the checkpoint says", p)
		}
	}
	if old != nil && r.cfg.Dedup != nil {
		if old.Dedup == nil {
			old, why = nil, "the checkpoint holds no dedup table"
		} else if t, err := dedup.Reopen(r.dedupConfig(), old.Dedup); err != nil {
			old, why = nil, fmt.Sprintf("the dedup table of the checkpoint cannot be reopened: %v", err)
		} else {
			ck.table = t
		}
	}
	upload := ""
	if old != nil && r.cfg.Sink != nil {
		if old.Upload == nil || old.Upload.ID == "" {
			old, why = nil, "the checkpoint names no upload"
		} else if open, err := cfg.Reattach(ctx, *old.Upload); err != nil {
			old, why = nil, fmt.Sprintf("the upload of the checkpoint cannot be continued: %v", err)
		} else {
			r.reopen = open
			upload = fmt.Sprintf(", the upload after its %d uploaded parts (%d bytes)", old.Upload.Parts, old.Upload.End)
		}
	}
	if old == nil {
		if ck.table != nil {
			ck.table.Close()
			ck.table = nil
		}
		if why != "" {
			r.say(fmt.Sprintf("%s: starting over: %s", r.cfg.Output, why))
		}
		ck.clean(local, r.cfg.RejectsPath)
		return nil, nil
	}
	// The source from the checkpoint's place: without reading what came before where it
	// can, else by dropping the samples already written as they come again.
	src, how := r.cfg.Source, "by its position"
	if rs, ok := src.(sources.Resumer); ok {
		if next, err := rs.Resume(old.Samples, old.Token); err == nil {
			src = next
		} else {
			r.skip, how = old.Samples, fmt.Sprintf("by re-reading its first %d samples (%v)", old.Samples, err)
		}
	} else {
		r.skip, how = old.Samples, fmt.Sprintf("by re-reading its first %d samples (the source cannot seek)", old.Samples)
	}
	r.cfg.Source = src
	r.done.Store(old.Samples)
	r.bytesIn.Store(old.BytesIn)
	r.rejected.Store(old.Rejected)
	r.filtered = old.Filtered
	r.dups = old.Duplicates
	copy(r.fields, old.Fields)
	for k, v := range old.ByReason {
		r.byReason[k] = v
	}
	r.lead, r.leadN, r.leadReason, r.leadField, r.logged = old.Lead, old.LeadN, old.LeadReason, old.LeadField, old.Logged
	ck.from, ck.number = old, old.Number
	r.say(fmt.Sprintf("%s: resumed at sample %d of checkpoint %d (taken %s), the source %s%s",
		r.cfg.Output, old.Samples, old.Number, old.Time.Format(time.RFC3339), how, upload),
		"resumed_at", old.Samples, "checkpoint", old.Number)
	return &pagewriter.State{Position: pagewriter.Position{Cursor: old.Cursor, Rows: old.Rows, Entries: old.Entries}, Payloads: old.Payloads}, nil
}

// read returns the checkpoint to resume, or nil and why not ("" when there is none).
func (ck *checkpointer) read(output string, cfg *Resume) (*checkpoint, string) {
	if cfg.Restart {
		if _, err := os.Stat(ck.path); err == nil {
			return nil, "--restart discards the checkpoint " + ck.path
		}
		return nil, ""
	}
	b, err := os.ReadFile(ck.path)
	if errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(pagewriter.PartialFiles(output)[0]); err == nil {
			return nil, "the earlier run stopped before its first checkpoint"
		}
		return nil, ""
	}
	if err != nil {
		return nil, fmt.Sprintf("the checkpoint %s cannot be read: %v", ck.path, err)
	}
	var c checkpoint
	if err := json.Unmarshal(b, &c); err != nil || c.Check == "" || c.sum() != c.Check {
		return nil, fmt.Sprintf("the checkpoint %s is damaged (%s)", ck.path, ErrCheckpoint)
	}
	switch {
	case c.Version != checkpointVersion:
		return nil, fmt.Sprintf("the checkpoint %s has layout %d, this tool writes %d", ck.path, c.Version, checkpointVersion)
	case c.Tool != cfg.Fingerprint.Version:
		return nil, fmt.Sprintf("the checkpoint was written by version %s, this is %s", quote.S(c.Tool), quote.S(cfg.Fingerprint.Version))
	case c.Recipe != cfg.Fingerprint.Recipe:
		return nil, "the recipe changed since the checkpoint"
	case c.Inputs.SHA256 != ck.print.SHA256:
		return nil, "the inputs changed since the checkpoint: " + inputsChange(c.Inputs, ck.print)
	case c.Cursor < 0 || c.Rows < 0 || c.Entries < 0 || c.Samples < 0 || c.RejectsLen < 0:
		return nil, fmt.Sprintf("the checkpoint %s is damaged (%s)", ck.path, ErrCheckpoint)
	}
	// The files must hold at least what the checkpoint covers.
	files := pagewriter.PartialFiles(output)
	for _, f := range []struct {
		path string
		need int64
	}{{files[0], 0}} {
		fi, err := os.Stat(f.path)
		if err != nil || fi.Size() < f.need {
			return nil, fmt.Sprintf("the partial output %s is missing or shorter than the checkpoint says", f.path)
		}
	}
	return &c, ""
}

// inputsChange names what differs between the inputs of a checkpoint and of the run.
func inputsChange(was, now inputsPrint) string {
	for i := range min(len(was.Files), len(now.Files)) {
		a, b := was.Files[i], now.Files[i]
		switch {
		case a.Path != b.Path:
			return fmt.Sprintf("input %d was %s, is %s", i+1, quote.S(a.Path), quote.S(b.Path))
		case a.Size != b.Size:
			return fmt.Sprintf("input %s was %d bytes, is %d", quote.S(a.Path), a.Size, b.Size)
		}
	}
	if was.Count != now.Count {
		return fmt.Sprintf("%d inputs then, %d now", was.Count, now.Count)
	}
	return fmt.Sprintf("%d inputs of %d bytes then, %d bytes now (paths or sizes differ)", was.Count, was.Bytes, now.Bytes)
}

// clean removes the record and the partial files of an earlier run.
func (ck *checkpointer) clean(output, rejects string) {
	os.Remove(ck.path)
	pagewriter.RemovePartial(output)
	dedup.RemoveFiles(dedupName(output))
	if rejects != "" {
		os.Remove(rejectsPartial(output, rejects))
	}
}

// take runs in account (under the baton) as chunk p claims, or first in dedupClaim (before
// p's keys go into the table): when a checkpoint is due it records the state before p
// (every earlier chunk claimed and counted) for the checkpointer. An error is the dedup
// table's (the run fails with it).
func (r *runner) take(p *pending) error {
	ck := r.ck
	ck.bytes += p.b.PayloadBytes()
	if ck.cfg.Bytes > 0 && ck.bytes >= ck.cfg.Bytes {
		ck.due.Store(true)
	}
	if !ck.due.Load() || p.t.Seq == 0 || len(ck.snaps) == cap(ck.snaps) {
		return nil // none due, or the last one is still being written
	}
	pos := r.w.ClaimPosition()
	var payloads int64
	for _, f := range r.fields {
		payloads += f[1]
	}
	c := &checkpoint{
		Version: checkpointVersion, Tool: ck.cfg.Fingerprint.Version, Recipe: ck.cfg.Fingerprint.Recipe,
		Inputs: ck.print, Samples: r.done.Load(), Token: p.before,
		Cursor: pos.Cursor, Rows: pos.Rows, Entries: pos.Entries, Payloads: payloads,
		BytesIn: r.bytesIn.Load(), Rejected: r.rejected.Load(), Filtered: r.filtered,
		Fields: append([][2]int64(nil), r.fields...), ByReason: maps.Clone(r.byReason),
		Lead: r.lead, LeadN: r.leadN, LeadReason: r.leadReason, LeadField: r.leadField, Logged: r.logged,
		Duplicates: r.dups, seq: p.t.Seq,
	}
	if r.rejects != nil {
		n, err := r.rejects.sync()
		if err != nil {
			return nil // no checkpoint now; the write error shows with the next line
		}
		c.RejectsLen = n
	}
	if r.dd != nil {
		st, err := r.dd.table.Checkpoint()
		if err != nil {
			return fmt.Errorf("dedup: checkpoint: %w", err)
		}
		c.Dedup = st
	}
	// Only take sends: there is room (checked above).
	ck.snaps <- c
	ck.due.Store(false)
	ck.bytes = 0
	return nil
}

// checkpoints runs beside the workers: it makes the state take recorded durable (the
// output's and the spills' fsync once every earlier chunk is written) and writes the
// record, until the workers are done.
func (r *runner) checkpoints(ctx context.Context) error {
	ck := r.ck
	var tick <-chan time.Time
	if ck.cfg.Every > 0 {
		t := time.NewTicker(ck.cfg.Every)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.workersDone:
			return nil
		case <-tick:
			ck.due.Store(true)
		case c := <-ck.snaps:
			if err := r.w.Sync(ctx, c.seq, c.Cursor); err != nil {
				if ctx.Err() != nil || errors.Is(err, pagewriter.ErrFailed) {
					return nil // the run's error explains
				}
				r.log.Warn("checkpoint skipped", "error", err)
				continue
			}
			if ck.rejects != nil {
				if err := ck.rejects.Sync(); err != nil {
					r.log.Warn("checkpoint skipped", "error", err)
					continue
				}
			}
			if c.Dedup != nil {
				// The runs merged away before c: the last record may name them.
				ck.garbage = append(ck.garbage, c.Dedup.Retired()...)
				if err := c.Dedup.Sync(); err != nil {
					r.log.Warn("checkpoint skipped", "error", err)
					continue
				}
			}
			c.Upload = r.w.Upload(c.Cursor)
			ck.number++
			c.Number, c.Time = ck.number, time.Now().UTC()
			c.Check = c.sum()
			b, _ := json.Marshal(c)
			if err := atomicfile.WriteFile(ck.path, b, 0o644); err != nil {
				r.log.Warn("checkpoint skipped", "error", err)
				continue
			}
			r.w.Release(c.Upload)
			for _, g := range ck.garbage {
				os.Remove(g) // named by no record now
			}
			ck.garbage = ck.garbage[:0]
			r.log.Debug("checkpoint", "number", c.Number, "samples", c.Samples)
			if ck.cfg.Log != nil {
				up := ""
				if u := c.Upload; u != nil {
					up = fmt.Sprintf(" (upload: %d parts, %d bytes uploaded)", u.Parts, u.End)
				}
				fmt.Fprintf(ck.cfg.Log, "convert: checkpoint %d at sample %d%s\n", c.Number, c.Samples, up)
			}
		}
	}
}

// finish ends a resumable run: after a commit the record goes (and the partial files are
// gone with the commit); after an interruption with a checkpoint everything stays for the
// next run; after one before the first checkpoint, or a failure of any other kind,
// everything goes (the next run starts over).
func (ck *checkpointer) finish(output, rejects string, committed, interrupted bool) {
	if interrupted && !committed && ck.number > 0 {
		return
	}
	ck.clean(output, rejects)
}
