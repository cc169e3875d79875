package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// errStalled cancels an attempt that moved no byte for the stall timeout.
var errStalled = errors.New("stalled")

// attempt is one try of a request: its context, cancelled when the attempt stalls, and
// touch, to be called whenever a byte moves.
type attempt struct {
	ctx   context.Context
	touch func()
}

// watchdog cancels an attempt when touch has not been called for stall.
type watchdog struct {
	last   atomic.Int64 // unix nanoseconds of the last touch
	stall  time.Duration
	timer  *time.Timer
	cancel context.CancelCauseFunc
}

func newWatchdog(stall time.Duration, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{stall: stall, cancel: cancel}
	w.touch()
	w.timer = time.AfterFunc(stall, w.check)
	return w
}

func (w *watchdog) touch() { w.last.Store(time.Now().UnixNano()) }

func (w *watchdog) check() {
	idle := time.Duration(time.Now().UnixNano() - w.last.Load())
	if idle >= w.stall {
		w.cancel(errStalled)
		return
	}
	w.timer.Reset(w.stall - idle)
}

// touchReader calls touch on every read and keeps the seeker of the body it wraps.
type touchReader struct {
	r     io.ReadSeeker
	touch func()
}

func (t *touchReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.touch()
	}
	return n, err
}

func (t *touchReader) Seek(off int64, whence int) (int64, error) { return t.r.Seek(off, whence) }

// do runs fn until it succeeds, fails with a permanent error, or the attempts run out,
// sleeping with exponential backoff and full jitter between attempts. stallMul scales the
// stall timeout (long server-side operations get more). The error is an *Error naming op
// and url.
func (c *Client) do(ctx context.Context, op, url string, stallMul int, fn func(a *attempt) error) error {
	var last error
	for i := 0; i < c.cfg.attempts; i++ {
		if i > 0 {
			if err := c.sleep(ctx, i); err != nil {
				break
			}
		}
		err := c.try(ctx, stallMul, fn)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			last = err
			break
		}
		if !classify(err).retry {
			return c.wrap(ctx, op, url, err)
		}
		last = err
	}
	if ctx.Err() != nil {
		return &Error{Op: op, URL: url, Err: context.Cause(ctx), Detail: context.Cause(ctx).Error()}
	}
	cl := classify(last)
	return &Error{Op: op, URL: url, Kind: ErrUnavailable,
		Detail: fmt.Sprintf("%d attempts, last: %s", c.cfg.attempts, cl.detail), Err: last}
}

// try runs one attempt under a stall watchdog.
func (c *Client) try(ctx context.Context, stallMul int, fn func(a *attempt) error) error {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := newWatchdog(c.cfg.stall*time.Duration(max1(stallMul)), cancel)
	err := fn(&attempt{ctx: actx, touch: w.touch})
	w.timer.Stop()
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), errStalled) {
		return stallError{err: err, after: w.stall}
	}
	return err
}

// sleep waits before attempt i (1-based retries): a random time up to base·2^(i-1), capped.
func (c *Client) sleep(ctx context.Context, i int) error {
	ceil := c.cfg.backoff << min(i-1, 30)
	if ceil <= 0 || ceil > c.cfg.maxBackoff {
		ceil = c.cfg.maxBackoff
	}
	d := time.Duration(rand.Int64N(int64(ceil)) + 1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stallError is an attempt cancelled by its watchdog.
type stallError struct {
	err   error
	after time.Duration
}

func (e stallError) Error() string { return fmt.Sprintf("no progress for %v: %v", e.after, e.err) }
func (e stallError) Unwrap() error { return e.err }

// class is what classify learns from an error.
type class struct {
	kind   error  // ErrNotFound, ErrDenied, ErrChanged, ErrConfig or nil
	detail string // short reason
	retry  bool   // transient: worth another attempt
}

// classify maps the errors of the stores' SDKs, the network and the filesystem onto the
// package's kinds, and decides whether another attempt may succeed.
func classify(err error) class {
	var se stallError
	if errors.As(err, &se) {
		return class{detail: fmt.Sprintf("no progress for %v", se.after), retry: true}
	}
	var ke *kindError
	if errors.As(err, &ke) {
		return class{kind: ke.kind, detail: ke.detail}
	}
	var oe *Error
	if errors.As(err, &oe) {
		return class{kind: oe.Kind, detail: oe.Detail} // already final (its own retries ran)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// Not the caller's context (do checks that first): an SDK's own timeout.
		return class{detail: "timeout", retry: true}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return class{kind: ErrNotFound, detail: "no such file"}
	case errors.Is(err, fs.ErrPermission):
		return class{kind: ErrDenied, detail: "permission denied"}
	}
	r := replyOf(err)
	if r.missing != "" {
		return class{kind: ErrNotFound, detail: r.missing}
	}
	code, status, msg := r.code, r.status, r.msg
	detail := code
	if detail == "" && status != 0 {
		detail = fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
	}
	if msg != "" && detail != "" && len(msg) < 200 {
		detail += ": " + msg
	}
	switch code {
	case "NoSuchBucket", "ContainerNotFound", "ContainerBeingDeleted":
		return class{kind: ErrNotFound, detail: "no such bucket"}
	case "NoSuchKey", "BlobNotFound":
		return class{kind: ErrNotFound, detail: "no such object"}
	case "NoSuchUpload":
		return class{kind: ErrNotFound, detail: "no such multipart upload"}
	case "AccessDenied", "Forbidden", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AllAccessDisabled",
		"ExpiredToken", "InvalidToken", "AuthenticationFailed", "AuthorizationFailure",
		"AuthorizationPermissionMismatch", "InsufficientAccountPermissions", "AccountIsDisabled",
		"forbidden":
		return class{kind: ErrDenied, detail: detail}
	case "PreconditionFailed", "ConditionNotMet", "conditionNotMet", "SourceConditionNotMet", "TargetConditionNotMet":
		return class{kind: ErrChanged, detail: detail}
	case "PermanentRedirect", "AuthorizationHeaderMalformed", "IllegalLocationConstraintException":
		return class{kind: ErrConfig, detail: detail + " (is AWS_REGION the bucket's region?)"}
	case "SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequests",
		"RequestTimeout", "RequestTimeoutException", "InternalError", "ServiceUnavailable", "ServerBusy",
		"OperationTimedOut", "rateLimitExceeded", "backendError", "internalError":
		return class{detail: detail, retry: true}
	}
	switch {
	case status == http.StatusNotFound:
		return class{kind: ErrNotFound, detail: detail}
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return class{kind: ErrDenied, detail: detail}
	case status == http.StatusPreconditionFailed:
		return class{kind: ErrChanged, detail: detail}
	case status == http.StatusMovedPermanently || status == http.StatusTemporaryRedirect:
		return class{kind: ErrConfig, detail: detail + " (is AWS_REGION the bucket's region?)"}
	case status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500:
		return class{detail: detail, retry: true}
	case status >= 400:
		return class{detail: detail}
	}
	if s := err.Error(); strings.Contains(s, "failed to retrieve credentials") || strings.Contains(s, "get credentials: ") || strings.Contains(s, "DefaultAzureCredential") ||
		strings.Contains(s, "could not find default credentials") {
		return class{kind: ErrDenied, detail: "no credentials found in the standard chain"}
	}
	if transient(err) {
		return class{detail: shortNetErr(err), retry: true}
	}
	return class{detail: err.Error()}
}

// transient reports network failures worth another attempt: timeouts, resets, refused or
// dropped connections, bodies cut short.
func transient(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, net.ErrClosed) {
		return true
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return true
	}
	s := err.Error()
	for _, m := range []string{"connection reset", "broken pipe", "unexpected EOF", "server closed idle connection",
		"http2: ", "transport connection broken", "connection refused", "use of closed network connection",
		"TLS handshake timeout", "i/o timeout", "EOF"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

func shortNetErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && len(s)-i < 80 {
		return s[i+2:]
	}
	return s
}

// wrap turns a permanent error into an *Error naming op and url.
func (c *Client) wrap(ctx context.Context, op, url string, err error) *Error {
	var oe *Error
	if errors.As(err, &oe) {
		return oe
	}
	if ctx.Err() != nil {
		return &Error{Op: op, URL: url, Err: context.Cause(ctx), Detail: context.Cause(ctx).Error()}
	}
	cl := classify(err)
	return &Error{Op: op, URL: url, Kind: cl.kind, Detail: cl.detail, Err: err}
}

// status returns the HTTP status of a store's error reply, or 0.
func status(err error) int { return replyOf(err).status }
