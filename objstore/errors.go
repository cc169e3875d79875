package objstore

import (
	"errors"
	"strings"
)

// Errors returned by this package, wrapped in an *Error that names the operation and the URL.
// Test them with errors.Is.
var (
	// ErrBadURL is a URL this package cannot address: an unknown scheme, no bucket, a key
	// with characters the store cannot hold, or an object operation on a prefix.
	ErrBadURL = errors.New("bad URL")
	// ErrNotFound is a missing bucket, container or object (the message says which).
	ErrNotFound = errors.New("not found")
	// ErrDenied is refused access: wrong or missing credentials, or no permission.
	ErrDenied = errors.New("access denied")
	// ErrChanged is an object that changed (another ETag or generation) while it was read.
	ErrChanged = errors.New("object changed while being read")
	// ErrUnavailable is a store that kept failing with transient errors (throttling, 5xx,
	// timeouts, dropped connections) until the retry budget ran out.
	ErrUnavailable = errors.New("store unavailable")
	// ErrConfig is a client configuration the store refuses: the bucket is in another
	// region than AWS_REGION, or the endpoint is not an object store.
	ErrConfig = errors.New("store configuration")
	// ErrPattern is an input pattern that is malformed or matches nothing.
	ErrPattern = errors.New("bad pattern")
	// ErrPart is a multipart misuse: a part number out of range, a part below the minimum
	// size that is not the last, a missing part, or a copy range outside its source.
	ErrPart = errors.New("bad multipart part")
	// ErrClosed is a use of an upload, reader or writer after Close, Complete or Abort.
	ErrClosed = errors.New("already closed")
	// ErrBadReply is a server reply this package cannot use: one the storage library failed
	// on (a listing entry without LastModified), or one without an object's size. A broken
	// server or proxy sends these; the reply is not retried.
	ErrBadReply = errors.New("bad reply from the store")
	// ErrUnsupported is an operation the store cannot do (e.g. a cross-store server-side copy
	// too large to pass through memory).
	ErrUnsupported = errors.New("not supported")
	// ErrTooLarge is an object larger than the caller said it can be (Client.ReadFile).
	ErrTooLarge = errors.New("object too large")
)

// Error is the error of one operation on one URL. Kind is one of the package's error
// values (or nil when the failure fits none of them); Err is the underlying error.
type Error struct {
	Op     string // "stat", "read", "write", "list", "upload part 3", ...
	URL    string // the URL as the caller wrote it
	Kind   error  // ErrNotFound, ErrDenied, ... or nil
	Detail string // a short reason from the store ("no such bucket", "SlowDown", ...)
	Err    error  // the underlying error; may be nil
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("objstore: ")
	b.WriteString(e.Op)
	if e.URL != "" {
		b.WriteString(" ")
		b.WriteString(e.URL)
	}
	b.WriteString(": ")
	switch {
	case e.Kind != nil && e.Detail != "":
		b.WriteString(e.Kind.Error())
		b.WriteString(" (")
		b.WriteString(e.Detail)
		b.WriteString(")")
	case e.Kind != nil:
		b.WriteString(e.Kind.Error())
		if e.Err != nil {
			b.WriteString(": ")
			b.WriteString(e.Err.Error())
		}
	case e.Detail != "":
		b.WriteString(e.Detail)
	case e.Err != nil:
		b.WriteString(e.Err.Error())
	default:
		b.WriteString("failed")
	}
	return b.String()
}

// Unwrap returns the kind and the underlying error, so errors.Is finds both.
func (e *Error) Unwrap() []error {
	var out []error
	if e.Kind != nil {
		out = append(out, e.Kind)
	}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

func newErr(op, url string, kind error, detail string) *Error {
	return &Error{Op: op, URL: url, Kind: kind, Detail: detail}
}
