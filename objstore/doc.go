// Package objstore opens, lists, reads and writes objects named by URL (s3://, gs://,
// azblob:// or az://, file:// and plain local paths), with retries. It is the one place that
// talks to object stores: ranged and streaming reads that resume where a connection broke,
// prefetching of the next inputs, atomic whole-object writes, and multipart uploads whose
// object appears only at Complete.
//
// Buckets are reached through gocloud.dev/blob (s3blob, gcsblob, azureblob); multipart
// uploads, server-side range copies and the listing of incomplete uploads use each store's
// native client, obtained through blob.Bucket.As. Local paths use the os package directly.
// Credentials come only from each cloud's standard chain; docs/STORAGE.md lists the
// environment variables read, the retry policy and how multipart maps onto each store.
package objstore
