package transfer

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"gocloud.dev/blob"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/vector"
)

// Stores are what an export reads and an import writes.
type Stores struct {
	Graph   *graph.Store
	Control *controlplane.Store
	// Memories is nil when the store keeps none.
	Memories *vector.Store
	// Bucket holds the bytes of stored files (knowledge/files); nil when
	// file storage is off. An export of a user with files needs it; an
	// import of an export with files too.
	Bucket *blob.Bucket
}

// ExportOptions choose what an export holds.
type ExportOptions struct {
	// Users are exported in this order; at least one.
	Users []consent.User
	// CairnVersion is written in the header.
	CairnVersion string
	// Vectors writes each memory's embedding.
	Vectors bool
	// Consent writes the users' agents and consent rules; Audit their
	// audit log. API keys are never written.
	Consent, Audit bool
	// GlobalSchemas writes the global schema versions (registered by the
	// operator) before the first user: set it when exporting every user.
	GlobalSchemas bool
	// PageSize is how many rows each read asks for; 0 means 500.
	PageSize int
	// Now is the time written in the header; zero means time.Now.
	Now time.Time
	// Progress, when set, is called after each line with the kind and the
	// lines written so far.
	Progress func(kind string, lines int)
}

// VectorReader is what an export with vectors needs of the memory store's
// driver: the embeddings of memories by id. vector.Store provides it when
// its driver does.
type VectorReader interface {
	Vectors(ctx context.Context, userID string, ids []string) (map[string][]float32, error)
}

// exportWriter writes lines and counts them.
type exportWriter struct {
	w *bufio.Writer
	// sum is the SHA-256 of the lines written but the end line.
	sum      hash.Hash
	counts   map[string]int
	lines    int
	progress func(string, int)
}

func (e *exportWriter) line(kind, user string, data any) error {
	b, err := marshalSnake(data)
	if err != nil {
		return fmt.Errorf("transfer: encode %s: %w", kind, err)
	}
	l, err := json.Marshal(Line{Kind: kind, User: user, Data: b})
	if err != nil {
		return fmt.Errorf("transfer: encode %s: %w", kind, err)
	}
	l = append(l, '\n')
	if kind != KindEnd {
		e.sum.Write(l)
	}
	if _, err := e.w.Write(l); err != nil {
		return fmt.Errorf("transfer: write: %w", err)
	}
	e.counts[kind]++
	e.lines++
	if e.progress != nil {
		e.progress(kind, e.lines)
	}
	return nil
}

// Export writes the users' data to w as JSON Lines and returns how many
// lines of each kind it wrote.
func Export(ctx context.Context, s Stores, w io.Writer, opts ExportOptions) (map[string]int, error) {
	if len(opts.Users) == 0 {
		return nil, errors.New("transfer: export: no user")
	}
	if opts.PageSize <= 0 {
		opts.PageSize = 500
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	// The files are listed first, for the header's count.
	userFiles := map[string][]files.File{}
	nfiles := 0
	for _, u := range opts.Users {
		fs, err := s.Control.StoredFiles(ctx, u.ID)
		if err != nil {
			return nil, err
		}
		userFiles[u.ID] = fs
		nfiles += len(fs)
	}
	if nfiles > 0 && s.Bucket == nil {
		return nil, fmt.Errorf("transfer: export: %d stored files, and no bucket to read their bytes from (configure the file bucket: --blob-url)", nfiles)
	}
	ew := &exportWriter{w: bufio.NewWriterSize(w, 1<<16), sum: sha256.New(), counts: map[string]int{}, progress: opts.Progress}
	err := ew.line(KindHeader, "", Header{
		Format: Format, Version: Version, CairnVersion: opts.CairnVersion, ExportedAt: opts.Now.UTC(),
		Users: opts.Users, Vectors: opts.Vectors, Consent: opts.Consent, Audit: opts.Audit, Files: nfiles,
	})
	if err != nil {
		return nil, err
	}
	delete(ew.counts, KindHeader)
	if opts.GlobalSchemas {
		if err := exportSchemas(ctx, s.Control, ew, ""); err != nil {
			return nil, err
		}
	}
	for _, u := range opts.Users {
		if err := exportUser(ctx, s, ew, u, userFiles[u.ID], opts); err != nil {
			return nil, err
		}
	}
	counts := ew.counts
	ew.counts = map[string]int{}
	if err := ew.line(KindEnd, "", End{Counts: counts, SHA256: hex.EncodeToString(ew.sum.Sum(nil))}); err != nil {
		return nil, err
	}
	if err := ew.w.Flush(); err != nil {
		return nil, fmt.Errorf("transfer: write: %w", err)
	}
	return counts, nil
}

func exportUser(ctx context.Context, s Stores, ew *exportWriter, u consent.User, fs []files.File, opts ExportOptions) error {
	if err := ew.line(KindUser, u.ID, u); err != nil {
		return err
	}
	// Schemas before entities: an import needs a type's schema first.
	if err := exportSchemas(ctx, s.Control, ew, u.ID); err != nil {
		return err
	}
	// One read transaction: the graph as it was at one moment.
	err := s.Graph.View(ctx, func(tx *graph.Tx) error {
		ex, ok := tx.DriverTx.(graph.Exporter)
		if !ok {
			return errors.New("transfer: the graph backend cannot be exported (no graph.Exporter)")
		}
		return exportGraph(ctx, tx, ex, ew, u.ID, opts.PageSize)
	})
	if err != nil {
		return err
	}
	for _, f := range fs {
		if err := exportFile(ctx, s.Bucket, ew, f); err != nil {
			return err
		}
	}
	if s.Memories != nil {
		if err := exportMemories(ctx, s.Memories, ew, u.ID, opts); err != nil {
			return err
		}
	}
	tables := []controlplane.TransferTable{controlplane.TableProfiles, controlplane.TableProfileLog,
		controlplane.TableContradicts, controlplane.TableRejected,
		controlplane.TableSchemaRecommendations, controlplane.TableSchemaSettings, controlplane.TableRelationshipTypes,
		controlplane.TableGraphRetractions, controlplane.TableGraphTombstones}
	if opts.Consent {
		tables = append(tables, controlplane.TableAgents, controlplane.TableConsentRules)
	}
	for _, t := range tables {
		err := s.Control.ExportRows(ctx, t, u.ID, func(row map[string]any) error {
			return ew.line(KindRow, u.ID, Row{Table: t.Name, Row: row})
		})
		if err != nil {
			return err
		}
	}
	if opts.Audit {
		return exportAudit(ctx, s.Control, ew, u.ID)
	}
	return nil
}

func exportGraph(ctx context.Context, tx *graph.Tx, ex graph.Exporter, ew *exportWriter, userID string, pageSize int) error {
	for after := ""; ; {
		srcs, err := ex.SourcesAfter(ctx, userID, after, pageSize)
		if err != nil {
			return err
		}
		for _, src := range srcs {
			if err := ew.line(KindSource, userID, src); err != nil {
				return err
			}
		}
		if len(srcs) < pageSize {
			break
		}
		after = srcs[len(srcs)-1].ID
	}
	for after := ""; ; {
		es, err := ex.EntitiesAfter(ctx, userID, after, pageSize)
		if err != nil {
			return err
		}
		if len(es) == 0 {
			break
		}
		ids := make([]string, len(es))
		for i, e := range es {
			ids[i] = e.ID
		}
		idents, err := ex.EntitiesIdentifiers(ctx, userID, ids)
		if err != nil {
			return err
		}
		byEntity := map[string][]graph.Identifier{}
		for _, set := range idents {
			byEntity[set.EntityID] = set.Identifiers
		}
		for _, e := range es {
			if err := ew.line(KindEntity, userID, Entity{Entity: e, Identifiers: byEntity[e.ID]}); err != nil {
				return err
			}
		}
		obs, err := tx.EntitiesObservations(ctx, userID, ids)
		if err != nil {
			return err
		}
		sortObservations(obs)
		for _, o := range obs {
			if err := ew.line(KindObservation, userID, o); err != nil {
				return err
			}
		}
		tls, err := ex.EntitiesTimelines(ctx, userID, ids)
		if err != nil {
			return err
		}
		for _, tl := range tls {
			if err := ew.line(KindTimeline, userID, tl); err != nil {
				return err
			}
		}
		if len(es) < pageSize {
			break
		}
		after = es[len(es)-1].ID
	}
	for after := ""; ; {
		fs, err := ex.RawFragmentsAfter(ctx, userID, after, pageSize)
		if err != nil {
			return err
		}
		for _, f := range fs {
			if err := ew.line(KindRawFragment, userID, f); err != nil {
				return err
			}
		}
		if len(fs) < pageSize {
			break
		}
		after = fs[len(fs)-1].ID
	}
	lastRel := ""
	for after := (graph.PeriodKey{}); ; {
		rels, err := ex.RelationshipPeriodsAfter(ctx, userID, after, pageSize)
		if err != nil {
			return err
		}
		for _, r := range rels {
			if err := ew.line(KindRelationship, userID, r); err != nil {
				return err
			}
			if r.ID == lastRel {
				continue
			}
			// A relationship's observations, once, after its first period.
			lastRel = r.ID
			obs, err := tx.RelationshipObservations(ctx, userID, r.ID)
			if err != nil {
				return err
			}
			for _, o := range obs {
				if err := ew.line(KindRelationshipObservation, userID, o); err != nil {
					return err
				}
			}
		}
		if len(rels) < pageSize {
			break
		}
		after = rels[len(rels)-1].Key()
	}
	return nil
}

// exportSchemas writes every schema version of an owner ("" for the
// global ones), by type then seq.
func exportSchemas(ctx context.Context, cp *controlplane.Store, ew *exportWriter, owner string) error {
	vs, err := cp.OwnerSchemaVersions(ctx, owner)
	if err != nil {
		return err
	}
	for _, v := range vs {
		if err := ew.line(KindSchema, owner, v); err != nil {
			return err
		}
	}
	return nil
}

// exportFile writes a stored file's bytes as blob lines of at most
// BlobChunk bytes, read from the bucket as they are written, then its file
// line.
func exportFile(ctx context.Context, b *blob.Bucket, ew *exportWriter, f files.File) error {
	r, err := b.NewReader(ctx, f.BlobKey, nil)
	if err != nil {
		return fmt.Errorf("transfer: export file %s (%s): %w", f.ID, f.BlobKey, err)
	}
	defer r.Close()
	buf := make([]byte, BlobChunk)
	var off int64
	for {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			if err := ew.line(KindBlob, f.UserID, Blob{FileID: f.ID, Offset: off, Data: buf[:n]}); err != nil {
				return err
			}
			off += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("transfer: export file %s: %w", f.ID, err)
		}
	}
	if off != f.Size {
		return fmt.Errorf("transfer: export file %s: the bucket holds %d bytes, its row says %d", f.ID, off, f.Size)
	}
	return ew.line(KindFile, f.UserID, f)
}

func exportMemories(ctx context.Context, ms *vector.Store, ew *exportWriter, userID string, opts ExportOptions) error {
	colls, err := ms.Collections(ctx, userID, nil)
	if err != nil {
		return err
	}
	// What was erased and retracted first (see KindMemoryTombstone).
	ts, err := ms.Tombstones(ctx, userID, nil)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if err := ew.line(KindMemoryTombstone, userID, t); err != nil {
			return err
		}
	}
	vs, err := ms.Versions(ctx, userID, nil)
	if err != nil {
		return err
	}
	spaces := make(map[string]vector.Space, len(colls))
	for _, c := range colls {
		spaces[c.Name] = c.Space
	}
	for _, v := range vs {
		if err := ew.line(KindMemoryVersion, userID, MemoryVersion{Version: v, Space: spaces[v.Collection]}); err != nil {
			return err
		}
	}
	var vr VectorReader
	if opts.Vectors {
		r, ok := any(ms).(VectorReader)
		if !ok {
			return errors.New("transfer: the memory store cannot read vectors back; export without --vectors")
		}
		vr = r
	}
	for _, c := range colls {
		for offset := 0; ; offset += vector.MaxLimit {
			res, err := ms.Search(ctx, vector.Query{
				Filter: vector.Filter{UserID: userID, Collections: []string{c.Name}},
				Sort:   vector.SortCreatedAt, Ascending: true, Limit: vector.MaxLimit, Offset: offset,
			})
			if err != nil {
				return err
			}
			var vecs map[string][]float32
			if vr != nil && len(res.Hits) > 0 {
				ids := make([]string, len(res.Hits))
				for i, h := range res.Hits {
					ids[i] = h.ID
				}
				if vecs, err = vr.Vectors(ctx, userID, ids); err != nil {
					return err
				}
			}
			for _, h := range res.Hits {
				m := h.Memory
				m.Embedding = vecs[m.ID]
				if err := ew.line(KindMemory, userID, Memory{Memory: m, Space: c.Space}); err != nil {
					return err
				}
			}
			if !res.HasMore {
				break
			}
		}
	}
	return nil
}

func exportAudit(ctx context.Context, cp *controlplane.Store, ew *exportWriter, userID string) error {
	for before := int64(0); ; {
		recs, err := cp.QueryAudit(ctx, consent.AuditQuery{UserID: userID, BeforeID: before, Limit: 500})
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := ew.line(KindAudit, userID, r); err != nil {
				return err
			}
		}
		if len(recs) < 500 {
			return nil
		}
		before = recs[len(recs)-1].ID
	}
}
