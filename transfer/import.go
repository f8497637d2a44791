package transfer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/vector"
	"github.com/cairnkg/cairn/vector/embed"
)

// ImportOptions configure an import.
type ImportOptions struct {
	// Embedder embeds memories whose vectors the export lacks or holds in
	// another space than the embedder's; nil leaves such memories out (and
	// counts them as skipped).
	Embedder embed.Embedder
	// BatchSize bounds how many lines are written in one transaction; 0
	// means 500.
	BatchSize int
	// Progress, when set, is called after each batch with the bytes read
	// so far and the lines imported.
	Progress func(bytesRead int64, lines int)
	// SpoolDir holds a file's bytes while its blob lines are read, until
	// they are checked and put in the bucket; empty means os.TempDir().
	SpoolDir string
}

// Stats says what an import did: lines read by kind, and rows written
// (what the store did not hold already) by kind.
type Stats struct {
	Read    map[string]int
	Written map[string]int
	// Embedded counts memories embedded again by the target's embedder.
	Embedded int
}

// ErrFormat is wrapped by the errors of a file that is not an export this
// version reads.
var ErrFormat = errors.New("transfer: not a cairn export")

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// ReadHeader reads the header line of an export from r, which it leaves
// after that line.
func ReadHeader(r *bufio.Reader) (Header, error) {
	b, err := r.ReadBytes('\n')
	if err != nil && (len(b) == 0 || !errors.Is(err, io.EOF)) {
		return Header{}, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	var l Line
	var h Header
	if json.Unmarshal(b, &l) != nil || l.Kind != KindHeader || json.Unmarshal(l.Data, &h) != nil || h.Format != Format {
		return Header{}, fmt.Errorf("%w: the first line is not a %s header", ErrFormat, Format)
	}
	if h.Version != Version {
		return Header{}, fmt.Errorf("%w: format version %d, this cairn reads version %d", ErrFormat, h.Version, Version)
	}
	return h, nil
}

// importer holds one batch of lines of one kind and user.
type importer struct {
	s     Stores
	opts  ImportOptions
	stats Stats
	kind  string
	user  string
	batch []json.RawMessage
	users map[string]bool
	// spool holds the bytes of the file whose blob lines are being read.
	spool *spool
}

// Import reads an export from r into the stores, a batch at a time, and
// returns what it read and wrote. It is idempotent: rows the stores hold
// already are left as they are.
func Import(ctx context.Context, s Stores, r io.Reader, opts ImportOptions) (Stats, error) {
	if opts.BatchSize <= 0 {
		opts.BatchSize = 500
	}
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 1<<16)
	h, err := ReadHeader(br)
	if err != nil {
		return Stats{}, err
	}
	if h.Files > 0 && s.Bucket == nil {
		return Stats{}, fmt.Errorf("transfer: the export holds %d files and this store has no file bucket: configure one (--blob-url) and import again; nothing was written", h.Files)
	}
	im := &importer{s: s, opts: opts, stats: Stats{Read: map[string]int{}, Written: map[string]int{}}, users: map[string]bool{}}
	defer im.closeSpool()
	for _, u := range h.Users {
		im.users[u.ID] = false
	}
	dec := json.NewDecoder(br)
	dec.UseNumber()
	var end *End
	lines := 1
	for {
		var l Line
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return im.stats, fmt.Errorf("%w: line %d: %v", ErrFormat, lines+1, err)
		}
		lines++
		if end != nil {
			return im.stats, fmt.Errorf("%w: line %d comes after the end line", ErrFormat, lines)
		}
		if l.Kind == KindEnd {
			end = &End{}
			if err := decode(l.Data, end); err != nil {
				return im.stats, err
			}
			continue
		}
		im.stats.Read[l.Kind]++
		// A blob line (up to a BlobChunk) is written alone.
		if l.Kind != im.kind || l.User != im.user || len(im.batch) >= opts.BatchSize || l.Kind == KindBlob {
			if err := im.flush(ctx); err != nil {
				return im.stats, err
			}
			if opts.Progress != nil {
				opts.Progress(cr.n, lines)
			}
			im.kind, im.user = l.Kind, l.User
		}
		im.batch = append(im.batch, l.Data)
	}
	if err := im.flush(ctx); err != nil {
		return im.stats, err
	}
	if opts.Progress != nil {
		opts.Progress(cr.n, lines)
	}
	if end == nil {
		return im.stats, fmt.Errorf("%w: no end line: the file is truncated", ErrFormat)
	}
	for kind, n := range end.Counts {
		if im.stats.Read[kind] != n {
			return im.stats, fmt.Errorf("%w: %d %s lines, the end line says %d", ErrFormat, im.stats.Read[kind], kind, n)
		}
	}
	return im.stats, nil
}

// decode decodes one line's data, numbers kept exact (json.Number), as
// graph drivers return them.
func decode(data json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return nil
}

// decodeAll decodes every line of a batch into a T.
func decodeAll[T any](batch []json.RawMessage) ([]T, error) {
	out := make([]T, len(batch))
	for i, b := range batch {
		if err := decode(b, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (im *importer) flush(ctx context.Context) error {
	if len(im.batch) == 0 {
		return nil
	}
	defer func() { im.batch = im.batch[:0] }()
	if im.kind != KindUser && (im.kind != KindSchema || im.user != "") {
		if done, ok := im.users[im.user]; !ok || !done {
			return fmt.Errorf("%w: a %s line of user %q, whom no user line before it names", ErrFormat, im.kind, im.user)
		}
	}
	n, err := im.write(ctx)
	im.stats.Written[im.kind] += n
	return err
}

// write writes the batch and returns how many rows were new.
func (im *importer) write(ctx context.Context) (int, error) {
	user := im.user
	switch im.kind {
	case KindUser:
		us, err := decodeAll[consent.User](im.batch)
		if err != nil {
			return 0, err
		}
		n := 0
		for _, u := range us {
			if u.ID != user {
				return n, fmt.Errorf("%w: user line of %s names user %s", ErrFormat, user, u.ID)
			}
			created, err := im.s.Control.ImportUser(ctx, u)
			if err != nil {
				return n, err
			}
			im.users[u.ID] = true
			if created {
				n++
			}
		}
		return n, nil
	case KindSource:
		srcs, err := decodeAll[graph.Source](im.batch)
		if err != nil {
			return 0, err
		}
		return im.update(ctx, func(tx *graph.Tx, _ graph.Exporter) (int, error) {
			n := 0
			for _, src := range srcs {
				if err := owned(user, src.UserID); err != nil {
					return 0, err
				}
				_, err := tx.Source(ctx, user, src.ID)
				if err == nil {
					continue
				}
				if !graph.IsNotFound(err) {
					return 0, err
				}
				if err := tx.InsertSource(ctx, src); err != nil {
					return 0, err
				}
				n++
			}
			return n, nil
		})
	case KindEntity:
		es, err := decodeAll[Entity](im.batch)
		if err != nil {
			return 0, err
		}
		return im.update(ctx, func(tx *graph.Tx, _ graph.Exporter) (int, error) {
			ids := make([]string, len(es))
			put := make([]graph.Entity, len(es))
			sets := make([]graph.EntityIdentifiers, len(es))
			for i, e := range es {
				if err := owned(user, e.UserID); err != nil {
					return 0, err
				}
				ids[i], put[i] = e.ID, e.Entity
				sets[i] = graph.EntityIdentifiers{EntityID: e.ID, Identifiers: e.Identifiers}
			}
			have, err := tx.Entities(ctx, user, ids)
			if err != nil {
				return 0, err
			}
			var fresh []string
			for _, id := range ids {
				if !slices.ContainsFunc(have, func(e graph.Entity) bool { return e.ID == id }) {
					fresh = append(fresh, id)
				}
			}
			if err := tx.PutEntities(ctx, put); err != nil {
				return 0, err
			}
			if err := tx.SetEntityIdentifiers(ctx, user, sets); err != nil {
				return 0, err
			}
			// Embeddings are derived: the outbox has the worker (or
			// cairn reembed) compute them for the new entities.
			if err := tx.EnqueueOutbox(ctx, user, fresh, graph.Now()); err != nil {
				return 0, err
			}
			return len(fresh), nil
		})
	case KindObservation:
		obs, err := decodeAll[graph.Observation](im.batch)
		if err != nil {
			return 0, err
		}
		return im.update(ctx, func(tx *graph.Tx, _ graph.Exporter) (int, error) {
			ids := make([]string, len(obs))
			for i, o := range obs {
				if err := owned(user, o.UserID); err != nil {
					return 0, err
				}
				ids[i] = o.ID
			}
			have, err := tx.ObservationsByID(ctx, user, ids)
			if err != nil {
				return 0, err
			}
			missing := without(obs, have, func(o graph.Observation) string { return o.ID })
			if len(missing) == 0 {
				return 0, nil
			}
			return len(missing), tx.InsertObservations(ctx, missing)
		})
	case KindTimeline:
		tls, err := decodeAll[graph.EntityTimeline](im.batch)
		if err != nil {
			return 0, err
		}
		return im.update(ctx, func(tx *graph.Tx, ex graph.Exporter) (int, error) {
			ids := make([]string, len(tls))
			for i, tl := range tls {
				ids[i] = tl.EntityID
				for _, ev := range tl.Events {
					if err := owned(user, ev.UserID); err != nil {
						return 0, err
					}
				}
			}
			stored, err := ex.EntitiesTimelines(ctx, user, ids)
			if err != nil {
				return 0, err
			}
			have := map[string]string{}
			for _, tl := range stored {
				have[tl.EntityID] = sameJSON(tl)
			}
			var changed []graph.EntityTimeline
			n := 0
			for _, tl := range tls {
				if have[tl.EntityID] != sameJSON(tl) {
					changed = append(changed, tl)
					n += len(tl.Events)
				}
			}
			if len(changed) == 0 {
				return 0, nil
			}
			return n, tx.ReplaceEntityTimelines(ctx, user, changed)
		})
	case KindRawFragment:
		fs, err := decodeAll[graph.RawFragment](im.batch)
		if err != nil {
			return 0, err
		}
		return im.update(ctx, func(tx *graph.Tx, ex graph.Exporter) (int, error) {
			ids := make([]string, len(fs))
			for i, f := range fs {
				if err := owned(user, f.UserID); err != nil {
					return 0, err
				}
				ids[i] = f.ID
			}
			have, err := ex.RawFragmentsByID(ctx, user, ids)
			if err != nil {
				return 0, err
			}
			missing := without(fs, have, func(f graph.RawFragment) string { return f.ID })
			if len(missing) == 0 {
				return 0, nil
			}
			return len(missing), tx.InsertRawFragments(ctx, missing)
		})
	case KindRelationship:
		rels, err := decodeAll[graph.Relationship](im.batch)
		if err != nil {
			return 0, err
		}
		return im.update(ctx, func(tx *graph.Tx, ex graph.Exporter) (int, error) {
			n := 0
			for _, r := range rels {
				if err := owned(user, r.UserID); err != nil {
					return 0, err
				}
				// The periods of the relationship that the store holds.
				stored, err := ex.RelationshipPeriodsAfter(ctx, user, graph.PeriodKey{ID: r.ID}, 1000)
				if err != nil {
					return 0, err
				}
				if slices.ContainsFunc(stored, func(p graph.Relationship) bool {
					return p.ID == r.ID && p.CreatedAt.Equal(r.CreatedAt) && sameJSON(p) == sameJSON(r)
				}) {
					continue
				}
				// PutRelationship keys a period by (id, CreatedAt): a
				// period the store holds differently is replaced.
				if err := tx.PutRelationship(ctx, r); err != nil {
					return 0, err
				}
				n++
			}
			return n, nil
		})
	case KindRelationshipObservation:
		obs, err := decodeAll[graph.RelationshipObservation](im.batch)
		if err != nil {
			return 0, err
		}
		return im.update(ctx, func(tx *graph.Tx, _ graph.Exporter) (int, error) {
			have := map[string]bool{}
			n := 0
			for _, o := range obs {
				if err := owned(user, o.UserID); err != nil {
					return 0, err
				}
				if _, ok := have[o.RelationshipID+"\x00"]; !ok {
					stored, err := tx.RelationshipObservations(ctx, user, o.RelationshipID)
					if err != nil {
						return 0, err
					}
					have[o.RelationshipID+"\x00"] = true
					for _, s := range stored {
						have[s.ID] = true
					}
				}
				if have[o.ID] {
					continue
				}
				if err := tx.InsertRelationshipObservation(ctx, o); err != nil {
					return 0, err
				}
				have[o.ID] = true
				n++
			}
			return n, nil
		})
	case KindSchema:
		vs, err := decodeAll[knowledge.SchemaVersion](im.batch)
		if err != nil {
			return 0, err
		}
		for _, v := range vs {
			if v.Owner != user {
				return 0, fmt.Errorf("%w: a schema of owner %q in the lines of %q", ErrFormat, v.Owner, user)
			}
		}
		return im.s.Control.ImportSchemaVersions(ctx, vs)
	case KindBlob:
		return 0, im.writeBlobs()
	case KindFile:
		return im.writeFiles(ctx)
	case KindMemory:
		return im.writeMemories(ctx)
	case KindRow:
		rows, err := decodeAll[Row](im.batch)
		if err != nil {
			return 0, err
		}
		n := 0
		for len(rows) > 0 {
			// Consecutive rows of one table in one call.
			k := 1
			for k < len(rows) && rows[k].Table == rows[0].Table {
				k++
			}
			t, ok := controlplane.TransferTableNamed(rows[0].Table)
			if !ok {
				return n, fmt.Errorf("%w: unknown table %q", ErrFormat, rows[0].Table)
			}
			batch := make([]map[string]any, k)
			for i, r := range rows[:k] {
				if r.Row["user_id"] != user {
					return n, fmt.Errorf("%w: a %s row of user %v in the lines of user %s", ErrFormat, t.Name, r.Row["user_id"], user)
				}
				batch[i] = r.Row
			}
			w, err := im.s.Control.ImportRows(ctx, t, batch)
			n += w
			if err != nil {
				return n, err
			}
			rows = rows[k:]
		}
		return n, nil
	case KindAudit:
		return im.writeAudit(ctx)
	default:
		return 0, fmt.Errorf("%w: unknown line kind %q", ErrFormat, im.kind)
	}
}

// update runs fn in one graph transaction with the driver's Exporter.
func (im *importer) update(ctx context.Context, fn func(*graph.Tx, graph.Exporter) (int, error)) (int, error) {
	n := 0
	err := im.s.Graph.Update(ctx, func(tx *graph.Tx) error {
		ex, ok := tx.DriverTx.(graph.Exporter)
		if !ok {
			return errors.New("transfer: the graph backend cannot be imported into (no graph.Exporter)")
		}
		var err error
		n, err = fn(tx, ex)
		return err
	})
	return n, err
}

// owned checks that a row of the lines of user belongs to user.
func owned(user, rowUser string) error {
	if rowUser != user {
		return fmt.Errorf("%w: a row of user %q in the lines of user %q", ErrFormat, rowUser, user)
	}
	return nil
}

// without returns the items of all whose id is not the id of one of have.
func without[T any](all, have []T, id func(T) string) []T {
	seen := make(map[string]bool, len(have))
	for _, h := range have {
		seen[id(h)] = true
	}
	var out []T
	for _, x := range all {
		if !seen[id(x)] {
			out = append(out, x)
		}
	}
	return out
}

func (im *importer) writeMemories(ctx context.Context) (int, error) {
	if im.s.Memories == nil {
		return 0, errors.New("transfer: the export holds memories and this store keeps none")
	}
	ms, err := decodeAll[Memory](im.batch)
	if err != nil {
		return 0, err
	}
	ids := make([]string, len(ms))
	for i, m := range ms {
		if err := owned(im.user, m.UserID); err != nil {
			return 0, err
		}
		ids[i] = m.ID
	}
	have, err := im.s.Memories.Get(ctx, im.user, ids)
	if err != nil {
		return 0, err
	}
	stored := make([]Memory, len(have))
	for i, m := range have {
		stored[i] = Memory{Memory: m}
	}
	missing := without(ms, stored, func(m Memory) string { return m.ID })
	if len(missing) == 0 {
		return 0, nil
	}
	// Memories of one space go in one Save: those whose vectors are in the
	// space of the target's embedder keep them, the others are embedded.
	var target vector.Space
	if im.opts.Embedder != nil {
		target = vector.Space{Embedder: im.opts.Embedder.Name(), Dimension: im.opts.Embedder.Dimension()}
	}
	var keep, again []vector.Memory
	for _, m := range missing {
		if len(m.Embedding) > 0 && m.Space.Embedder == target.Embedder && len(m.Embedding) == m.Space.Dimension &&
			(target.Dimension == 0 || target.Dimension == m.Space.Dimension) {
			keep = append(keep, m.Memory)
			target.Dimension = m.Space.Dimension
			continue
		}
		m.Embedding = nil
		again = append(again, m.Memory)
	}
	if len(again) > 0 {
		if im.opts.Embedder == nil {
			return 0, errors.New("transfer: memories without vectors of this store's embedder, and no embedder to embed them")
		}
		texts := make([]string, len(again))
		for i, m := range again {
			texts[i] = knowledge.MemoryText(m.Title, m.Text)
		}
		vecs, err := im.opts.Embedder.Embed(ctx, texts)
		if err != nil {
			return 0, fmt.Errorf("transfer: embed memories: %w", err)
		}
		for i := range again {
			again[i].Embedding = vecs[i]
			target.Dimension = len(vecs[i])
		}
		im.stats.Embedded += len(again)
	}
	all := append(keep, again...)
	if _, err := im.s.Memories.Save(ctx, target, all...); err != nil {
		return 0, err
	}
	return len(all), nil
}

func (im *importer) writeAudit(ctx context.Context) (int, error) {
	recs, err := decodeAll[consent.AuditRecord](im.batch)
	if err != nil {
		return 0, err
	}
	if len(recs) == 0 {
		return 0, nil
	}
	// Records the store holds already (same time, request, tool, kind,
	// resource and decision) are left out, so that an import run twice
	// appends them once: those within the batch's time span are read.
	lo, hi := recs[0].At, recs[0].At
	for _, r := range recs {
		if r.UserID != im.user {
			return 0, fmt.Errorf("%w: an audit record of user %q in the lines of user %q", ErrFormat, r.UserID, im.user)
		}
		lo, hi = minTime(lo, r.At), maxTime(hi, r.At)
	}
	seen := map[string]bool{}
	for before := int64(0); ; {
		stored, err := im.s.Control.QueryAudit(ctx, consent.AuditQuery{UserID: im.user, Since: lo, Until: hi, BeforeID: before, Limit: 500})
		if err != nil {
			return 0, err
		}
		for _, s := range stored {
			seen[auditKey(s)] = true
		}
		if len(stored) < 500 {
			break
		}
		before = stored[len(stored)-1].ID
	}
	var add []consent.AuditRecord
	for _, r := range recs {
		if k := auditKey(r); !seen[k] {
			seen[k] = true
			r.ID = 0
			add = append(add, r)
		}
	}
	if len(add) == 0 {
		return 0, nil
	}
	return len(add), im.s.Control.AppendAudit(ctx, add)
}
