//go:build nogcs

package objstore

import "context"

// gcsBuilt: this build (-tags nogcs) has no Google Cloud Storage client; gs:// URLs fail
// with ErrUnsupported.
const gcsBuilt = false

func openGCS(context.Context, string) (store, error) {
	return nil, &kindError{ErrUnsupported, "this build has no gs:// support (built with -tags nogcs)"}
}

func gcsReply(error, *reply) {}
