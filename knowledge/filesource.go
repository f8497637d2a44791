package knowledge

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/cairnkg/cairn/graph"
)

// RecordFileSource records a stored file as a source of kind graph.SourceFile,
// unless the user has that content already: the same bytes are one source.
// The source's id and created time are those of src when it is new; the
// existing source is returned, with existed set, otherwise. The caller
// needs write access to sources.
func (s *Service) RecordFileSource(ctx context.Context, c Caller, src graph.Source) (out graph.Source, existed bool, err error) {
	if err := c.need(Write, ResourceSources); err != nil {
		return graph.Source{}, false, err
	}
	src.UserID, src.Kind = c.UserID, graph.SourceFile
	src.ID = SourceID(c.UserID, src.ContentHash)
	if src.CreatedAt.IsZero() {
		src.CreatedAt = s.clock()
	}
	write := func(tx *graph.Tx) error {
		got, err := tx.SourceByHash(ctx, c.UserID, src.ContentHash)
		if err == nil {
			out, existed = got, true
			return nil
		}
		if !errors.Is(err, graph.ErrNotFound) {
			return err
		}
		out, existed = src, false
		return tx.InsertSource(ctx, src)
	}
	err = s.graph.Update(ctx, write)
	if errors.Is(err, graph.ErrConflict) {
		err = s.graph.Update(ctx, write)
	}
	if err != nil {
		return graph.Source{}, false, fmt.Errorf("knowledge: record file source: %w", err)
	}
	return out, existed, nil
}

// FileOrigin is where in a file an interpreted observation came from.
type FileOrigin struct {
	FileID   string
	Filename string
	MimeType string
	// Unit is "line", "byte", "page" or "item"; Start and End bound the
	// part of the file.
	Unit       string
	Start, End int64
	// Interpretation is the job and configuration that read it.
	Interpretation map[string]any
}

// OriginOf returns the file and the part of it that an observation was
// interpreted from, when its source is a batch that the files package
// stored (its provenance names the file and, in the order of the batch's
// observations, their ranges); ok is false for any other source.
func OriginOf(src graph.Source, observationID string) (FileOrigin, bool) {
	file, ok := fileProvenance(src)
	if !ok {
		return FileOrigin{}, false
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	o := FileOrigin{FileID: str(file, "source_id"), Filename: str(file, "filename"), MimeType: str(file, "mime_type")}
	o.Interpretation, _ = src.Provenance["interpretation"].(map[string]any)
	ranges, _ := src.Provenance["ranges"].([]any)
	for i, r := range ranges {
		if hashID("obs_", src.ID, fmt.Sprint(i)) != observationID {
			continue
		}
		if m, ok := r.(map[string]any); ok {
			o.Unit = str(m, "unit")
			o.Start, o.End = int64Of(m["start"]), int64Of(m["end"])
		}
		break
	}
	return o, o.FileID != ""
}

func int64Of(v any) int64 {
	switch n := v.(type) {
	case float64:
		return int64(n)
	case int64:
		return n
	case int:
		return int64(n)
	case interface{ Int64() (int64, error) }:
		i, _ := n.Int64()
		return i
	}
	return 0
}

// fileProvenance is what a batch the files package stored says of the
// file it was interpreted from (source_id, filename, content_hash,
// mime_type); ok is false for any other source.
func fileProvenance(src graph.Source) (file map[string]any, ok bool) {
	file, ok = src.Provenance["file"].(map[string]any)
	return file, ok
}

// fileOfSource is the id of the stored file a source is, or that a batch
// interpreted from one names in its provenance; "" for any other source.
func fileOfSource(src graph.Source) string {
	if src.Kind == graph.SourceFile {
		return src.ID
	}
	if f, ok := fileProvenance(src); ok {
		id, _ := f["source_id"].(string)
		return id
	}
	return ""
}

// sourceReadable reports whether the caller may see what a source says of
// the file it is or was interpreted from (its name, its hash, the job that
// read it): only with every type the file was found to hold
// (Options.SourceTypes), as for the file itself.
func (s *Service) sourceReadable(ctx context.Context, c Caller, src graph.Source) (bool, error) {
	id := fileOfSource(src)
	if id == "" || s.sourceTypes == nil || c.Allowed == nil {
		return true, nil
	}
	types, err := s.sourceTypes(ctx, c.UserID, id)
	if err != nil {
		return false, err
	}
	return c.MayReadAll(types), nil
}

// withoutFile is a batch source without what names the file it was
// interpreted from.
func withoutFile(src graph.Source) graph.Source {
	p := maps.Clone(src.Provenance)
	for _, k := range []string{"file", "interpretation", "ranges", "source_refs"} {
		delete(p, k)
	}
	src.Provenance = p
	return src
}

// redactSources applies consent on files to sources a read returns: a file
// the caller may not read is left out, and a batch interpreted from one
// loses what names it.
func (s *Service) redactSources(ctx context.Context, c Caller, srcs []graph.Source) ([]graph.Source, error) {
	out := srcs[:0:0]
	for _, src := range srcs {
		ok, err := s.sourceReadable(ctx, c, src)
		switch {
		case err != nil:
			return nil, err
		case ok:
			out = append(out, src)
		case src.Kind != graph.SourceFile:
			out = append(out, withoutFile(src))
		}
	}
	return out, nil
}
