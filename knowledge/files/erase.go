package files

import (
	"context"
	"errors"
	"fmt"

	"gocloud.dev/gcerrors"
)

// EraseFile removes a stored file's bytes from the bucket and its row,
// once the graph has erased its source (knowledge.Service.Erase calls it
// through SetFileEraser): it reports whether the user had the file. The
// blob goes first, so that a failure leaves the row to find the file by
// and erase again.
func (s *Service) EraseFile(ctx context.Context, userID, id string) (bool, error) {
	f, err := s.meta.File(ctx, userID, id)
	if errors.Is(err, ErrFileNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("files: erase %s: %w", id, err)
	}
	if err := s.bucket.Delete(ctx, f.BlobKey); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return false, fmt.Errorf("files: erase %s: %w", id, err)
	}
	if err := s.meta.DeleteFile(ctx, userID, id); err != nil {
		return false, fmt.Errorf("files: erase %s: %w", id, err)
	}
	return true, nil
}
