package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/quote"
)

// SampleError is a sample that could not be converted: where it came from, which field, and
// a short reason class ("decode", "missing field", "too large", ...).
// Its origin and key are copies:
// a batch's samples live in memory reused once their chunk is written, and an error may
// outlive it (returned by Run under the fail policy).
type SampleError struct {
	Origin, Key, Field, Reason string
	Err                        error

	pos int // the sample's position in its chunk
}

func (e *SampleError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: field %q: %v", quote.S(e.Origin), e.Field, e.Err)
	}
	return fmt.Sprintf("%s: %v", quote.S(e.Origin), e.Err)
}

func (e *SampleError) Unwrap() error { return e.Err }

// Reasoner is implemented by errors that know their reject reason class; sources and
// encoders may return such errors (e.g. "too many pixels", "unsupported format").
type Reasoner interface{ Reason() string }

func reasonOf(err error, fromSource bool) string {
	var r Reasoner
	switch {
	case errors.As(err, &r) && r.Reason() != "":
		return r.Reason()
	case errors.Is(err, mldf.ErrPayloadLarge):
		return "too large"
	case errors.Is(err, ErrMissingColumn):
		return "missing field"
	case errors.Is(err, fs.ErrPermission):
		return "unreadable"
	case errors.Is(err, fs.ErrNotExist):
		return "missing file"
	case fromSource:
		return "read"
	}
	return "decode"
}

// account runs as a chunk claims its place, in chunk order: it counts the chunk, records its
// rejects and applies the error policy, so that errors and the rejects file do not depend on
// the worker count.
func (r *runner) account(p *pending) error {
	if r.ck != nil && r.dd == nil { // with dedup, dedupClaim takes it
		if err := r.take(p); err != nil {
			return err
		}
	}
	r.done.Add(p.n)
	r.bytesIn.Add(p.in)
	for f, c := range p.pays {
		r.fields[f][0] += c[0]
		r.fields[f][1] += c[1]
	}
	if len(p.rej) == 0 {
		return nil
	}
	for _, e := range p.rej {
		filtered := errors.Is(e.Err, encoders.ErrFiltered)
		if filtered {
			e.Reason = "filtered"
		}
		var dup *DuplicateError
		errors.As(e.Err, &dup)
		r.byReason[e.Reason]++
		if r.rejects != nil && r.rejErr == nil && dup != nil {
			if err := r.rejects.write(r.dd.line(e, dup)); err != nil {
				r.rejErr = err
			}
		} else if r.rejects != nil && r.rejErr == nil {
			line, _ := json.Marshal(struct {
				Origin      string      `json:"origin"`
				Key         string      `json:"key"`
				Field       string      `json:"field"`
				Reason      string      `json:"reason"`
				Error       string      `json:"error"`
				DuplicateOf *firstEntry `json:"duplicate_of,omitempty"`
			}{quote.S(e.Origin), quote.S(e.Key), e.Field, e.Reason, e.Err.Error(), firstOf(dup)})
			if err := r.rejects.write(append(line, '\n')); err != nil {
				r.rejErr = err
			}
		}
		if r.rejErr != nil {
			return fmt.Errorf("rejects file %s: %w", r.cfg.RejectsPath, r.rejErr)
		}
		if filtered {
			r.filtered++
			continue
		}
		if dup != nil {
			r.dups++
			continue
		}
		rejected := r.rejected.Add(1)
		if r.cfg.OnError == Fail {
			return e
		}
		if m := r.cfg.MaxErrors; m > 0 && rejected > m {
			return fmt.Errorf("%w: %d rejected, more than max_errors %d (last: %w)", ErrTooManyErrors, rejected, m, e)
		}
		if r.logged < 10 {
			r.logged++
			r.log.Warn("skipped sample", "origin", e.Origin, "field", e.Field, "reason", e.Reason, "error", e.Err)
		}
	}
	if err := r.followLead(p); err != nil {
		return err
	}
	return r.checkFraction(false)
}

// followLead follows the run of rejects a run starts with, through chunk p (in chunk
// order, under the baton): the LeadRejects-th consecutive reject from the first sample on,
// all for one reason in one field, stops the run with ErrAllRejected.
func (r *runner) followLead(p *pending) error {
	if !r.lead {
		return nil
	}
	for k, e := range p.rej {
		if e.pos != k || e.Reason == "filtered" || e.Reason == "duplicate" || (r.leadN > 0 && (e.Reason != r.leadReason || e.Field != r.leadField)) {
			r.lead = false // a sample written or filtered, or another reason
			return nil
		}
		r.leadReason, r.leadField = e.Reason, e.Field
		r.leadN++
		if r.leadN >= LeadRejects {
			r.lead = false
			where := ""
			if e.Field != "" {
				where = fmt.Sprintf(", field %q", e.Field)
			}
			return fmt.Errorf("%w: the first %d samples were all rejected (reason %q%s), so the run stops here rather than reject the rest one by one; the last: %w",
				ErrAllRejected, r.leadN, e.Reason, where, e)
		}
	}
	if int64(len(p.rej)) < p.n {
		r.lead = false
	}
	return nil
}

// checkFraction fails the run when the rejected fraction is certain to exceed the limit: at
// the end, or earlier against the source's known length.
func (r *runner) checkFraction(final bool) error {
	frac := r.cfg.MaxErrorFraction
	if frac <= 0 {
		return nil
	}
	rej := r.rejected.Load()
	var of int64
	switch {
	case final:
		of = r.done.Load()
	case r.total > 0:
		of = r.total
	default:
		return nil
	}
	if of > 0 && float64(rej) > frac*float64(of) {
		return fmt.Errorf("%w: %d of %d samples rejected, more than max_error_fraction %g", ErrTooManyErrors, rej, of, frac)
	}
	return nil
}
