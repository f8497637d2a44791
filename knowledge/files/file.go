package files

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// File states.
const (
	// StatePending: the row exists, the blob or the source may not yet.
	StatePending = "pending"
	// StateStored: the blob and the graph's source exist.
	StateStored = "stored"
)

// File is a stored file's metadata. Its ID is its source's id.
type File struct {
	ID          string
	UserID      string
	ContentHash string // hex SHA-256 of the bytes
	BlobKey     string
	Size        int64
	MimeType    string
	Filename    string
	State       string
	AgentID     string
	CreatedAt   time.Time
	// Types are the entity types the file's interpretation stored from
	// it: what the file was found to be. The file, its jobs' details and
	// every record derived from its text are readable only by a caller
	// that may read all of them (knowledge.Caller.MayReadAll).
	Types []string
}

// Meta keeps file metadata and the URL signing secret. The control plane
// implements it on SQLite and PostgreSQL. Every method is scoped by user
// where it takes one: another user's file is ErrFileNotFound.
type Meta interface {
	// BeginFile inserts f as a pending row, unless the user has a row with
	// its id, which it returns with exists set.
	BeginFile(ctx context.Context, f File) (existing File, exists bool, err error)
	// FinishFile marks a pending row stored.
	FinishFile(ctx context.Context, userID, id string) error
	// BeginFileWithinQuota is BeginFile, except that a new row whose size
	// would take the total size of the user's files (pending ones
	// included) over quota is not inserted and the error is a
	// *QuotaError; the check and the insert are atomic, so uploads at
	// the same moment cannot together pass a check only one of them
	// fits. A row the user already has is returned with exists set,
	// unchecked: the same bytes take no more room.
	BeginFileWithinQuota(ctx context.Context, f File, quota int64) (existing File, exists bool, err error)
	// AddFileTypes adds entity types to a row's Types (a set that only
	// grows), concurrent adders included.
	AddFileTypes(ctx context.Context, userID, id string, types []string) error
	// DeleteFile removes a row.
	DeleteFile(ctx context.Context, userID, id string) error
	// File returns a row, or an error wrapping ErrFileNotFound.
	File(ctx context.Context, userID, id string) (File, error)
	// PendingFiles returns the pending rows created before a time, oldest
	// first.
	PendingFiles(ctx context.Context, before time.Time) ([]File, error)
	// UsedBytes is the total size of a user's files.
	UsedBytes(ctx context.Context, userID string) (int64, error)
	// SigningSecret returns the secret signed URLs are made with, creating
	// it on first use; every process on the store gets the same one.
	SigningSecret(ctx context.Context) ([]byte, error)
}

// Errors of the package; callers test with errors.Is or errors.As.
var (
	// ErrFileNotFound: no such file for this user.
	ErrFileNotFound = errors.New("file not found")
	// ErrJobNotFound: no such job for this user.
	ErrJobNotFound = errors.New("job not found")
	// ErrJobFinished: the job has already finished (it cannot be
	// cancelled).
	ErrJobFinished = errors.New("job already finished")
	// ErrLeaseLost: the worker no longer holds the job's lease (another
	// worker took it over after the lease expired).
	ErrLeaseLost = errors.New("job lease lost")
	// ErrBadSignature: a signed URL is expired, altered or not one of ours.
	ErrBadSignature = errors.New("signed URL is invalid or expired")
	// ErrNoSigning: there is no way to make a URL (no HTTP server to serve
	// it and a bucket that cannot sign).
	ErrNoSigning = errors.New("URL signing is not available")
)

// TooLargeError: a file is over the size limit. Size is how much was read
// before the upload was refused (at least Max+1), not necessarily the
// whole file.
type TooLargeError struct {
	Size, Max int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("file exceeds the %d-byte limit", e.Max)
}

// UnsupportedError: a file's detected type is not one Cairn keeps.
type UnsupportedError struct {
	MimeType  string
	Supported []string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("file type %s is not supported", e.MimeType)
}

// QuotaError: storing the file would take the user over their quota.
type QuotaError struct {
	Used, Quota, Size int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("storing %d bytes would exceed the storage quota (%d of %d bytes used)", e.Size, e.Used, e.Quota)
}
