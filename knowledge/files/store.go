package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
)

// PutRequest describes a file being stored.
type PutRequest struct {
	// Filename is the name the client gave, kept as given (not trusted as
	// a path).
	Filename string
	// MimeType is the type the client declared; the type kept is detected
	// from the bytes (see DetectType).
	MimeType string
}

// Stored is the outcome of Put.
type Stored struct {
	File File
	// Deduplicated: the user had stored these bytes before; nothing new
	// was written.
	Deduplicated bool
}

// BlobKey is where a user's content lives in the bucket.
func BlobKey(userID, contentHash string) string {
	return path.Join("users", userID, "sha256", contentHash)
}

// Put stores a file read from r for the caller, who needs write access to
// sources. The bytes are streamed to a spool file while they are hashed and
// counted, so that a file of any size is never held in memory; past the
// size limit reading stops and Put returns a *TooLargeError. Then the type
// is detected (*UnsupportedError), the file's size reserved against the
// quota together with its pending row (*QuotaError; see Meta.BeginFileWithinQuota), and the
// file written as the package doc says; a blob that cannot be written gives
// its reservation back. The same bytes stored again by the
// same user return the first file, Deduplicated.
func (s *Service) Put(ctx context.Context, c knowledge.Caller, r io.Reader, req PutRequest) (Stored, error) {
	if !c.May(knowledge.Write, knowledge.ResourceSources) {
		return Stored{}, &knowledge.AccessError{Resource: knowledge.ResourceSources, Action: knowledge.Write}
	}
	spool, err := os.CreateTemp(s.spool, "cairn-upload-*")
	if err != nil {
		return Stored{}, fmt.Errorf("files: spool: %w", err)
	}
	defer func() {
		_ = spool.Close()
		_ = os.Remove(spool.Name())
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(spool, h), io.LimitReader(r, s.maxBytes+1))
	if err != nil {
		return Stored{}, fmt.Errorf("files: read upload: %w", err)
	}
	if n > s.maxBytes {
		return Stored{}, &TooLargeError{Size: n, Max: s.maxBytes}
	}
	head := make([]byte, 3072)
	m, err := spool.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return Stored{}, fmt.Errorf("files: spool: %w", err)
	}
	mimeType := DetectType(head[:m], req.Filename, req.MimeType)
	if !slices.Contains(Supported, mimeType) {
		return Stored{}, &UnsupportedError{MimeType: mimeType, Supported: Supported}
	}
	hash := hex.EncodeToString(h.Sum(nil))
	f := File{
		ID: knowledge.SourceID(c.UserID, hash), UserID: c.UserID, ContentHash: hash, BlobKey: BlobKey(c.UserID, hash),
		Size: n, MimeType: mimeType, Filename: cleanFilename(req.Filename), State: StatePending, AgentID: c.AgentID,
		CreatedAt: s.clock(),
	}
	if prev, err := s.meta.File(ctx, c.UserID, f.ID); err == nil && prev.State == StateStored {
		return Stored{File: prev, Deduplicated: true}, nil
	} else if err != nil && !errors.Is(err, ErrFileNotFound) {
		return Stored{}, err
	}
	prev, exists, err := s.begin(ctx, f)
	if err != nil {
		return Stored{}, err
	}
	if exists {
		if prev.State == StateStored {
			return Stored{File: prev, Deduplicated: true}, nil
		}
		// A pending row of the same bytes: another upload is under way or
		// one crashed. Writing the same content again is harmless.
		f = prev
	}
	if err := s.writeBlob(ctx, spool, f); err != nil {
		if !exists {
			s.release(ctx, f)
		}
		return Stored{}, err
	}
	if err := s.finish(ctx, c, f); err != nil {
		return Stored{}, err
	}
	f.State = StateStored
	return Stored{File: f}, nil
}

// begin inserts f's pending row, within the quota if there is one.
func (s *Service) begin(ctx context.Context, f File) (File, bool, error) {
	if s.quota <= 0 {
		return s.meta.BeginFile(ctx, f)
	}
	return s.meta.BeginFileWithinQuota(ctx, f, s.quota)
}

// release removes the pending row of an upload whose blob could not be
// written, so that its bytes stop counting against the quota at once
// rather than when Recover removes it. It keeps the row if the blob is
// there after all (an upload of the same bytes at the same moment wrote
// it and will finish the row; were the row gone, that upload's FinishFile
// would fail rather than answer a file with no row). It runs even when ctx
// has ended: an upload cut short is the usual reason for a failed write.
func (s *Service) release(ctx context.Context, f File) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if ok, err := s.bucket.Exists(ctx, f.BlobKey); err == nil && ok {
		return // finished by the other upload, or by Recover
	}
	if err := s.meta.DeleteFile(ctx, f.UserID, f.ID); err != nil {
		s.log.Warn("files: release a failed upload's row", "file", f.ID, "err", err)
	}
}

// writeBlob copies the spool to the file's key unless the bucket has it.
// The bucket's writer is atomic: cancelled or failed, it leaves nothing.
func (s *Service) writeBlob(ctx context.Context, spool *os.File, f File) error {
	if ok, err := s.bucket.Exists(ctx, f.BlobKey); err != nil {
		return fmt.Errorf("files: blob exists: %w", err)
	} else if ok {
		return nil
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("files: spool: %w", err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.bucket.NewWriter(wctx, f.BlobKey, &blob.WriterOptions{ContentType: f.MimeType})
	if err != nil {
		return fmt.Errorf("files: write blob: %w", err)
	}
	if _, err := io.Copy(w, spool); err != nil {
		cancel() // abort: the writer discards what it has
		_ = w.Close()
		return fmt.Errorf("files: write blob: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("files: write blob: %w", err)
	}
	return nil
}

// finish records the graph's source and marks the row stored; both steps
// may be repeated.
func (s *Service) finish(ctx context.Context, c knowledge.Caller, f File) error {
	_, _, err := s.know.RecordFileSource(ctx, c, graph.Source{
		ContentHash: f.ContentHash, MimeType: f.MimeType, OriginalFilename: f.Filename, Size: f.Size,
		Provenance: map[string]any{"blob_key": f.BlobKey, "recorded_by_agent": f.AgentID}, CreatedAt: f.CreatedAt,
	})
	if err != nil {
		return err
	}
	return s.meta.FinishFile(ctx, f.UserID, f.ID)
}

// File returns one of the caller's stored files; the caller needs read
// access to sources. A file of another user, one still pending, or one
// holding data the caller may not read (File.Types) is ErrFileNotFound.
func (s *Service) File(ctx context.Context, c knowledge.Caller, id string) (File, error) {
	if !c.May(knowledge.Read, knowledge.ResourceSources) {
		return File{}, &knowledge.AccessError{Resource: knowledge.ResourceSources, Action: knowledge.Read}
	}
	f, err := s.storedFile(ctx, c.UserID, id)
	if err != nil {
		return File{}, err
	}
	if !c.MayReadAll(f.Types) {
		return File{}, fmt.Errorf("files: %s: %w", id, ErrFileNotFound)
	}
	return f, nil
}

// SourceTypes returns the knowledge service's Options.SourceTypes over the
// file rows of m: the entity types a user's file was found to hold
// (File.Types); a source that is not a file holds none.
func SourceTypes(m Meta) func(ctx context.Context, userID, sourceID string) ([]string, error) {
	return func(ctx context.Context, userID, sourceID string) ([]string, error) {
		f, err := m.File(ctx, userID, sourceID)
		if errors.Is(err, ErrFileNotFound) {
			return nil, nil
		}
		return f.Types, err
	}
}

func (s *Service) storedFile(ctx context.Context, userID, id string) (File, error) {
	f, err := s.meta.File(ctx, userID, id)
	if err != nil {
		return File{}, err
	}
	if f.State != StateStored {
		return File{}, fmt.Errorf("files: %s: %w", id, ErrFileNotFound)
	}
	return f, nil
}

// Open returns a reader of a stored file's bytes. It checks no consent:
// callers are the job runner and the signed-URL route, whose signature is
// the authority.
func (s *Service) Open(ctx context.Context, userID, id string) (*blob.Reader, File, error) {
	f, err := s.storedFile(ctx, userID, id)
	if err != nil {
		return nil, File{}, err
	}
	r, err := s.bucket.NewReader(ctx, f.BlobKey, nil)
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil, File{}, fmt.Errorf("files: blob of %s is missing: %w", id, ErrFileNotFound)
		}
		return nil, File{}, fmt.Errorf("files: open blob: %w", err)
	}
	return r, f, nil
}

// ReadAll returns a stored file's bytes, for interpreters.
func (s *Service) ReadAll(ctx context.Context, userID, id string) ([]byte, File, error) {
	r, f, err := s.Open(ctx, userID, id)
	if err != nil {
		return nil, File{}, err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, File{}, fmt.Errorf("files: read blob: %w", err)
	}
	return b, f, nil
}

// Recovered counts what Recover did.
type Recovered struct {
	// Repaired: pending files whose blob was written; their source and
	// row were completed.
	Repaired int
	// Removed: pending files whose blob was never written; their row was
	// deleted (the upload had not been answered).
	Removed int
}

// Recover finishes or removes the files a crash left pending for longer
// than grace (zero: all of them; on a store several processes share, give
// a grace longer than any upload takes). Serve and stdio run it at start.
func (s *Service) Recover(ctx context.Context, grace time.Duration) (Recovered, error) {
	var out Recovered
	pending, err := s.meta.PendingFiles(ctx, s.now().Add(-grace+time.Microsecond))
	if err != nil {
		return out, err
	}
	for _, f := range pending {
		ok, err := s.bucket.Exists(ctx, f.BlobKey)
		if err != nil {
			return out, fmt.Errorf("files: recover %s: %w", f.ID, err)
		}
		if !ok {
			if err := s.meta.DeleteFile(ctx, f.UserID, f.ID); err != nil {
				return out, err
			}
			out.Removed++
			continue
		}
		c := knowledge.Caller{UserID: f.UserID, AgentID: f.AgentID}
		if err := s.finish(ctx, c, f); err != nil {
			return out, fmt.Errorf("files: recover %s: %w", f.ID, err)
		}
		out.Repaired++
	}
	if len(pending) > 0 {
		s.log.Info("files recovered after an interrupted upload", "repaired", out.Repaired, "removed", out.Removed)
	}
	return out, nil
}

// cleanFilename keeps the last element of a client's filename, bounded.
func cleanFilename(name string) string {
	name = strings.TrimSpace(name)
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	if len(name) > 255 {
		name = name[:255]
	}
	return name
}
