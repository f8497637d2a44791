// Package files keeps the user's files: uploads streamed to a bucket
// (gocloud.dev/blob: a folder by default, S3 in production), content-addressed
// by SHA-256 per user, recorded as sources of the graph; signed URLs to read
// them back; and their interpretation as durable jobs that workers lease from
// the control plane, with progress, retries, cancellation and a checkpoint
// that a job resumed after a crash continues from.
//
// A stored file is written in three steps, each repeatable: a pending row in
// the control plane, the blob (written atomically by the bucket: a folder
// bucket renames a finished temporary file, an object store commits a whole
// upload), then the graph's source and the row marked stored. Recover, run at
// start, finishes or removes what a crash left pending.
//
// Interpretation stores what an interpreter (package interpret) read from a
// file through the knowledge service's store pipeline, a batch at a time.
// Each batch is its own structured source whose provenance names the file,
// the lines or bytes it came from and the interpretation run; being
// content-addressed, a batch stored again by a resumed job is deduplicated,
// so a job interrupted anywhere never records an observation twice.
package files
