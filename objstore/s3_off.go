//go:build nos3

package objstore

import "context"

// s3Built: this build (-tags nos3) has no AWS SDK; s3:// URLs fail with ErrUnsupported.
const s3Built = false

// s3Env stands in for the AWS configuration the client would hold.
type s3Env struct{}

func (c *Client) openS3(context.Context, string) (store, error) {
	return nil, &kindError{ErrUnsupported, "this build has no s3:// support (built with -tags nos3)"}
}

func s3Reply(error, *reply) {}
