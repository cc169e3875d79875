package objstore

import (
	"strconv"
	"strings"
)

// Each cloud's SDK is compiled in unless a build tag leaves it out: nos3, nogcs, noazure
// (s3.go, gcs.go and azure.go carry the opposite constraint; *_off.go stand in for them).
// A URL of a store left out fails with ErrUnsupported, saying so.

// Backend is one kind of store and whether this build can reach it.
type Backend struct {
	Scheme string // "s3", "gs", "azblob" (also written az://)
	Built  bool   // false when the build left the store's SDK out
	Tag    string // the build tag that leaves it out
}

// Backends lists the cloud stores and whether this build includes each (local files are
// always included).
func Backends() []Backend {
	return []Backend{
		{SchemeS3, s3Built, "nos3"},
		{SchemeGCS, gcsBuilt, "nogcs"},
		{SchemeAzure, azureBuilt, "noazure"},
	}
}

// reply is what a store SDK's error says about the server's answer.
type reply struct {
	code    string // the store's error code ("NoSuchKey", "ContainerNotFound", ...)
	status  int    // the HTTP status, or 0
	msg     string // the server's message
	missing string // set by SDKs that report a missing bucket or object by a sentinel error
}

// replyOf reads err through each compiled-in SDK's error types.
func replyOf(err error) reply {
	var r reply
	s3Reply(err, &r)
	gcsReply(err, &r)
	azureReply(err, &r)
	return r
}

// replySize returns an object's size from the reply to a ranged read: the total of its
// Content-Range ("bytes 0-0/1234"), or, for a reply that ignored the range (whole: a 200
// with the whole object), its Content-Length.
func replySize(contentRange *string, contentLength *int64, whole bool) (int64, bool) {
	if contentRange == nil {
		if contentLength == nil || !whole {
			return 0, false
		}
		return *contentLength, *contentLength >= 0
	}
	_, total, ok := strings.Cut(*contentRange, "/")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(total), 10, 64)
	if err != nil || v < 0 {
		return 0, false
	}
	return v, true
}
