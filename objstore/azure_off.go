//go:build noazure

package objstore

import "context"

// azureBuilt: this build (-tags noazure) has no Azure SDK; az:// URLs fail with
// ErrUnsupported.
const azureBuilt = false

func openAzure(context.Context, string) (store, error) {
	return nil, &kindError{ErrUnsupported, "this build has no az:// support (built with -tags noazure)"}
}

func azureReply(error, *reply) {}
