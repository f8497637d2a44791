package transfer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"

	"gocloud.dev/blob"

	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/knowledge/schema"
)

// spool is a temporary file holding the bytes of one exported file while
// its blob lines are read, hashed as they come.
type spool struct {
	f      *os.File
	fileID string
	n      int64
	h      hash.Hash
}

func (im *importer) closeSpool() {
	if im.spool != nil {
		_ = im.spool.f.Close()
		_ = os.Remove(im.spool.f.Name())
		im.spool = nil
	}
}

// writeBlobs appends the batch's chunks (one, see Import) to the spool.
func (im *importer) writeBlobs() error {
	bs, err := decodeAll[Blob](im.batch)
	if err != nil {
		return err
	}
	for _, b := range bs {
		if im.spool == nil || im.spool.fileID != b.FileID {
			if b.Offset != 0 {
				return fmt.Errorf("%w: file %s starts at offset %d", ErrFormat, b.FileID, b.Offset)
			}
			if err := im.resetSpool(b.FileID); err != nil {
				return err
			}
		}
		if b.Offset != im.spool.n {
			return fmt.Errorf("%w: file %s: a chunk at offset %d after %d bytes", ErrFormat, b.FileID, b.Offset, im.spool.n)
		}
		if _, err := im.spool.f.Write(b.Data); err != nil {
			return fmt.Errorf("transfer: spool: %w", err)
		}
		im.spool.h.Write(b.Data)
		im.spool.n += int64(len(b.Data))
	}
	return nil
}

func (im *importer) resetSpool(fileID string) error {
	if im.spool == nil {
		f, err := os.CreateTemp(im.opts.SpoolDir, "cairn-import-*")
		if err != nil {
			return fmt.Errorf("transfer: spool: %w", err)
		}
		im.spool = &spool{f: f}
	}
	if err := im.spool.f.Truncate(0); err != nil {
		return fmt.Errorf("transfer: spool: %w", err)
	}
	if _, err := im.spool.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("transfer: spool: %w", err)
	}
	im.spool.fileID, im.spool.n, im.spool.h = fileID, 0, sha256.New()
	return nil
}

// writeFiles writes each file of the batch: its bytes (the blob lines just
// read) checked against its size and hash, then, as an upload does, a
// pending row, the blob unless the bucket has it (keys are content
// addresses), and the row marked stored. A file the store holds already
// is left alone; its blob is written only if the bucket lacks it. A file
// whose source the store erased is skipped.
func (im *importer) writeFiles(ctx context.Context) (int, error) {
	fs, err := decodeAll[files.File](im.batch)
	if err != nil {
		return 0, err
	}
	erased, err := im.erasedInStore(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range fs {
		if err := owned(im.user, f.UserID); err != nil {
			return n, err
		}
		if f.BlobKey != files.BlobKey(f.UserID, f.ContentHash) {
			return n, fmt.Errorf("%w: file %s: blob key %q is not its content address", ErrFormat, f.ID, f.BlobKey)
		}
		if f.Size > 0 && (im.spool == nil || im.spool.fileID != f.ID) {
			return n, fmt.Errorf("%w: file %s: no blob lines before its file line", ErrFormat, f.ID)
		}
		var got int64
		sum := hex.EncodeToString(sha256.New().Sum(nil))
		if im.spool != nil && im.spool.fileID == f.ID {
			got, sum = im.spool.n, hex.EncodeToString(im.spool.h.Sum(nil))
		}
		if got != f.Size || sum != f.ContentHash {
			return n, fmt.Errorf("%w: file %s: %d bytes of hash %s, its line says %d bytes of hash %s", ErrFormat, f.ID, got, sum, f.Size, f.ContentHash)
		}
		for _, t := range f.Types {
			if err := schema.ValidateTypeName("types", t); err != nil {
				return n, fmt.Errorf("%w: file %s: %v", ErrFormat, f.ID, err)
			}
		}
		// A file is its source: one the store erased does not come back
		// from an export made before.
		if erased[f.ID] {
			im.skip(SkipErased, KindFile, 1)
			continue
		}
		have, err := im.s.Control.File(ctx, f.UserID, f.ID)
		switch {
		case err == nil && have.State == files.StateStored:
			if err := im.putBlob(ctx, f); err != nil {
				return n, err
			}
			// Types only narrow who may read the file: the line's are
			// added to those the store holds.
			if err := im.s.Control.AddFileTypes(ctx, f.UserID, f.ID, f.Types); err != nil {
				return n, err
			}
			continue
		case err != nil && !errors.Is(err, files.ErrFileNotFound):
			return n, err
		}
		f.State = files.StatePending
		if _, _, err := im.s.Control.BeginFile(ctx, f); err != nil {
			return n, err
		}
		if err := im.putBlob(ctx, f); err != nil {
			return n, err
		}
		// The row holds its types before it is stored, and so readable.
		if err := im.s.Control.AddFileTypes(ctx, f.UserID, f.ID, f.Types); err != nil {
			return n, err
		}
		if err := im.s.Control.FinishFile(ctx, f.UserID, f.ID); err != nil {
			return n, err
		}
		n++
	}
	if im.spool != nil {
		im.spool.fileID = ""
	}
	return n, nil
}

// putBlob copies the spool to the file's key unless the bucket has it.
func (im *importer) putBlob(ctx context.Context, f files.File) error {
	if ok, err := im.s.Bucket.Exists(ctx, f.BlobKey); err != nil {
		return fmt.Errorf("transfer: blob exists: %w", err)
	} else if ok {
		return nil
	}
	var r io.Reader = eofReader{}
	if im.spool != nil && im.spool.fileID == f.ID {
		if _, err := im.spool.f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("transfer: spool: %w", err)
		}
		r = im.spool.f
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := im.s.Bucket.NewWriter(wctx, f.BlobKey, &blob.WriterOptions{ContentType: f.MimeType})
	if err != nil {
		return fmt.Errorf("transfer: write blob: %w", err)
	}
	if _, err := io.Copy(w, r); err != nil {
		cancel() // abort: the writer discards what it has
		_ = w.Close()
		return fmt.Errorf("transfer: write blob: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("transfer: write blob: %w", err)
	}
	im.stats.Written[KindBlob]++
	return nil
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
