package transfer

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
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
	// MaxFieldBytes bounds one field value (the bytes of its JSON
	// encoding), as --max-field-bytes does for tool calls: a line with a
	// larger one is refused. 0 means knowledge.DefaultMaxFieldBytes.
	MaxFieldBytes int
	// MaxLineBytes bounds one line of the file: a longer line is refused
	// as it is read, never held whole. 0 means 64 field bounds, and at
	// least 4 MiB (a blob line is about 1 MiB).
	MaxLineBytes int
	// Agents imports the agents of the export; without it agent rows are
	// skipped (and counted as not asked for).
	Agents bool
	// Consent imports the consent rules of the export, only those of an
	// agent this import created (so it needs Agents to import any): a rule
	// never grants an agent the store held before the import.
	Consent bool
	// Audit imports the audit log of the export.
	Audit bool
	// Eraser erases what the store still holds of the entities and
	// sources the export's graph tombstones name, as erase does
	// (knowledge.Service, with its file eraser set). nil: an import whose
	// tombstones name an entity or source the store holds fails there,
	// without recording those tombstones; one whose tombstones name
	// nothing the store holds needs none.
	Eraser GraphEraser
}

// Reasons a line is not written, the keys of Stats.Skipped.
const (
	// SkipHeld: the store holds the row already, or holds the entity or
	// relationship it belongs to (whose rows the import leaves alone).
	SkipHeld = "held"
	// SkipInvalid: the line fails a check a tool call would apply, its
	// snapshot disagrees with its observations, or it is too long;
	// Stats.Refused says why.
	SkipInvalid = "invalid"
	// SkipNotAsked: agents, consent rules and audit records are imported
	// only when ImportOptions asks for them.
	SkipNotAsked = "not_asked"
	// SkipErased: the memory, entity or source was erased in the store
	// (it has a tombstone), or the line is of what an erased entity or
	// source produced: an older export does not bring it back.
	SkipErased = "erased"
	// SkipRetracted: the memory was retracted in the store: an older
	// export does not make it count again.
	SkipRetracted = "retracted"
)

// Stats says what an import did: lines read by kind, rows written (what
// the store did not hold already) by kind, and lines skipped by reason and
// kind.
type Stats struct {
	Read    map[string]int
	Written map[string]int
	// Skipped counts the lines not written, by reason (SkipHeld,
	// SkipInvalid, SkipNotAsked) then kind.
	Skipped map[string]map[string]int
	// Refused lists the first MaxRefusals invalid lines with the reason.
	Refused []Refusal
	// Embedded counts memories embedded again by the target's embedder.
	Embedded int
	// Erased counts what the import erased from the store because the
	// export's tombstones say it was erased, by kind as erase and
	// delete_memory count it: entities, observations, sources, files,
	// recomputed_entities, …, memories, retracted_memories, versions.
	// Nil when it erased nothing.
	Erased map[string]int
	// Checksum says whether the file's SHA-256 is the one its end line
	// holds. It is known once the file is read, after the lines were
	// written: a mismatch says the file was changed after export (each
	// line was checked all the same); it cannot say the file is genuine,
	// since whoever edits it can compute the sum again.
	Checksum string
}

// The values of Stats.Checksum.
const (
	ChecksumVerified = "verified"
	ChecksumMismatch = "mismatch"
	// ChecksumAbsent: an export of a cairn version before the sum.
	ChecksumAbsent = "absent"
)

// MaxRefusals bounds Stats.Refused; Stats.Skipped counts every one.
const MaxRefusals = 100

// Refusal is one line an import refused.
type Refusal struct {
	Line   int
	Kind   string
	Reason string
}

func (r Refusal) String() string { return fmt.Sprintf("line %d (%s): %s", r.Line, r.Kind, r.Reason) }

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

// maxHeaderBytes bounds the header line (it lists the users).
const maxHeaderBytes = 4 << 20

// ReadHeader reads the header line of an export from r, which it leaves
// after that line. It reads at most 4 MiB of it.
func ReadHeader(r *bufio.Reader) (Header, error) {
	return readHeader(&lineReader{r: r, max: maxHeaderBytes})
}

func readHeader(lr *lineReader) (Header, error) {
	b, tooLong, err := lr.next()
	if err != nil {
		return Header{}, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	var l Line
	var h Header
	if tooLong || json.Unmarshal(b, &l) != nil || l.Kind != KindHeader || json.Unmarshal(l.Data, &h) != nil || h.Format != Format {
		return Header{}, fmt.Errorf("%w: the first line is not a %s header", ErrFormat, Format)
	}
	switch h.Version {
	case 1:
	case 2, Version:
		// Read again: the users' fields are in snake_case.
		h = Header{}
		if err := unmarshalSnake(l.Data, &h); err != nil {
			return Header{}, fmt.Errorf("%w: header: %v", ErrFormat, err)
		}
	default:
		return Header{}, fmt.Errorf("%w: format version %d, this cairn reads versions 1 to %d", ErrFormat, h.Version, Version)
	}
	return h, nil
}

// item is one line's data and its line number.
type item struct {
	line int
	data json.RawMessage
	// snake says the data names fields in snake_case (format version 2).
	snake bool
}

// importer holds one batch of lines of one kind and user.
type importer struct {
	s     Stores
	opts  ImportOptions
	check checker
	stats Stats
	kind  string
	user  string
	batch []item
	users map[string]bool
	// spool holds the bytes of the file whose blob lines are being read.
	spool *spool
	// The state of the user whose graph lines are being read.
	graphUser string
	// pending are the new entities whose observations are being read:
	// they are written once their snapshot is checked against them.
	pending    []pendingEntity
	pendingObs []pendingObservation
	// pendingBytes bounds what pending holds.
	pendingBytes int
	// merged are the new merged entities: their observations moved to the
	// entity they were merged into, which may come later in the file, so
	// they are checked when the user's entity lines end.
	merged []pendingEntity
	// created are the entities this import wrote, whose observations,
	// timelines and raw fragments it writes; createdRels the
	// relationships, whose observations it writes.
	created, createdRels map[string]bool
	// waiting are the ids of pending and merged.
	waiting map[string]bool
	// erased are the ids of the entities and sources of the user that the
	// store has a tombstone of (erasedInStore); nil until read.
	erased map[string]bool
	// agents are the agents this import created, whose consent rules it
	// writes.
	agents map[string]bool
	// tombstoned are the graph tombstones of the user recorded so far,
	// whose erasure waits for the user's lines to end.
	tombstoned []graphTombstone
}

type pendingEntity struct {
	line int
	e    Entity
}

type pendingObservation struct {
	line int
	o    graph.Observation
}

// maxPendingBytes bounds the entity and observation lines held until
// their entities are checked; past it they are checked with what was read.
const maxPendingBytes = 64 << 20

// Import reads an export from r into the stores, a batch at a time, and
// returns what it read, wrote, skipped and erased. An export line never
// changes what the stores hold: an entity, observation, relationship
// period or row the stores hold already is left as it is, and so are the
// observations, timelines and raw fragments of an entity they hold; but a
// tombstone erases what the stores still hold of that memory, entity or
// source (Stats.Erased). Running it twice changes nothing. Every value is
// checked as a tool call checks it; a line that fails is refused (counted
// in Stats.Skipped, listed in Stats.Refused) and the import goes on. A new
// entity is written only if its snapshot agrees with its observations:
// each field's value is the value of the observation its provenance
// names, an observation of that entity in the same file.
func Import(ctx context.Context, s Stores, r io.Reader, opts ImportOptions) (Stats, error) {
	if opts.BatchSize <= 0 {
		opts.BatchSize = 500
	}
	if opts.MaxFieldBytes <= 0 {
		opts.MaxFieldBytes = knowledge.DefaultMaxFieldBytes
	}
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = max(64*opts.MaxFieldBytes, 4<<20)
	}
	cr := &countingReader{r: r}
	lr := &lineReader{r: bufio.NewReaderSize(cr, 1<<16), max: maxHeaderBytes, sum: sha256.New()}
	h, err := readHeader(lr)
	if err != nil {
		return Stats{}, err
	}
	lr.max = opts.MaxLineBytes
	if h.Files > 0 && s.Bucket == nil {
		return Stats{}, fmt.Errorf("transfer: the export holds %d files and this store has no file bucket: configure one (--blob-url) and import again; nothing was written", h.Files)
	}
	im := &importer{s: s, opts: opts, check: checker{maxFieldBytes: opts.MaxFieldBytes},
		stats: Stats{Read: map[string]int{}, Written: map[string]int{}, Skipped: map[string]map[string]int{}},
		users: map[string]bool{}, agents: map[string]bool{}}
	defer im.closeSpool()
	for _, u := range h.Users {
		im.users[u.ID] = false
	}
	var end *End
	for {
		b, tooLong, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return im.stats, fmt.Errorf("transfer: line %d: %w", lr.n+1, err)
		}
		if tooLong {
			// Counted as read under the kind it starts with, so that the
			// end line's counts still add up.
			kind := kindPrefix(b)
			if kind == "" {
				return im.stats, fmt.Errorf("%w: line %d is longer than %d bytes", ErrFormat, lr.n, opts.MaxLineBytes)
			}
			im.stats.Read[kind]++
			im.refuse(kind, lr.n, fmt.Sprintf("the line is longer than %d bytes (the import's line bound, from --max-field-bytes); it was not read", opts.MaxLineBytes))
			continue
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var l Line
		if err := json.Unmarshal(b, &l); err != nil {
			return im.stats, fmt.Errorf("%w: line %d: %v", ErrFormat, lr.n, err)
		}
		if end != nil {
			return im.stats, fmt.Errorf("%w: line %d comes after the end line", ErrFormat, lr.n)
		}
		if l.Kind == KindEnd {
			lr.unsum()
			end = &End{}
			if err := decode(item{line: lr.n, data: l.Data, snake: h.Version >= 2}, end); err != nil {
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
			if err := im.settle(ctx, l.Kind, l.User); err != nil {
				return im.stats, err
			}
			if opts.Progress != nil {
				opts.Progress(cr.n, lr.n)
			}
			im.kind, im.user = l.Kind, l.User
		}
		// json.Unmarshal copied the data out of the reader's buffer.
		im.batch = append(im.batch, item{line: lr.n, data: l.Data, snake: h.Version >= 2})
	}
	if err := im.flush(ctx); err != nil {
		return im.stats, err
	}
	if err := im.settle(ctx, "", ""); err != nil {
		return im.stats, err
	}
	if opts.Progress != nil {
		opts.Progress(cr.n, lr.n)
	}
	if end == nil {
		return im.stats, fmt.Errorf("%w: no end line: the file is truncated", ErrFormat)
	}
	for kind, n := range end.Counts {
		if im.stats.Read[kind] != n {
			return im.stats, fmt.Errorf("%w: %d %s lines, the end line says %d", ErrFormat, im.stats.Read[kind], kind, n)
		}
	}
	switch {
	case end.SHA256 == "":
		im.stats.Checksum = ChecksumAbsent
	case end.SHA256 == hex.EncodeToString(lr.sum.Sum(nil)):
		im.stats.Checksum = ChecksumVerified
	default:
		im.stats.Checksum = ChecksumMismatch
	}
	return im.stats, nil
}

// skip counts n lines of kind not written, for reason.
func (im *importer) skip(reason, kind string, n int) {
	if n == 0 {
		return
	}
	if im.stats.Skipped[reason] == nil {
		im.stats.Skipped[reason] = map[string]int{}
	}
	im.stats.Skipped[reason][kind] += n
}

// refuse counts an invalid line and says why.
func (im *importer) refuse(kind string, line int, why string) {
	im.skip(SkipInvalid, kind, 1)
	if len(im.stats.Refused) < MaxRefusals {
		im.stats.Refused = append(im.stats.Refused, Refusal{Line: line, Kind: kind, Reason: why})
	}
}

// decode decodes one line's data, numbers kept exact (json.Number), as
// graph drivers return them: snake_case names from format version 2 on,
// encoding/json's Go names in version 1.
func decode(it item, v any) error {
	if it.snake {
		if err := unmarshalSnake(it.data, v); err != nil {
			return fmt.Errorf("%w: %v", ErrFormat, err)
		}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(it.data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return nil
}

// decodeAll decodes every line of a batch into a T.
func decodeAll[T any](batch []item) ([]T, error) {
	out := make([]T, len(batch))
	for i, b := range batch {
		if err := decode(b, &out[i]); err != nil {
			return nil, fmt.Errorf("line %d: %w", b.line, err)
		}
	}
	return out, nil
}

// lineOf is a decoded line and its number.
type lineOf[T any] struct {
	line int
	v    T
}

// decodeValid decodes the lines of the batch into a T and keeps those
// that check accepts; the others are refused.
func decodeValid[T any](im *importer, check func(T) error) []lineOf[T] {
	out := make([]lineOf[T], 0, len(im.batch))
	for _, b := range im.batch {
		var v T
		if err := decode(b, &v); err != nil {
			im.refuse(im.kind, b.line, err.Error())
			continue
		}
		if err := check(v); err != nil {
			im.refuse(im.kind, b.line, err.Error())
			continue
		}
		out = append(out, lineOf[T]{b.line, v})
	}
	return out
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

// ownedBy returns a check that a row of the lines of user belongs to user,
// then applies check.
func ownedBy[T any](user string, rowUser func(T) string, check func(T) error) func(T) error {
	return func(v T) error {
		if u := rowUser(v); u != user {
			return fmt.Errorf("a row of user %q in the lines of user %q", u, user)
		}
		return check(v)
	}
}

// write writes the batch and returns how many rows were new.
func (im *importer) write(ctx context.Context) (int, error) {
	user := im.user
	if im.kind != KindUser && im.kind != KindSchema {
		im.startUser(user)
	}
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
			} else {
				im.skip(SkipHeld, KindUser, 1)
			}
		}
		return n, nil
	case KindSource:
		srcs := decodeValid(im, ownedBy(user, func(s graph.Source) string { return s.UserID }, im.check.source))
		erased, err := im.erasedInStore(ctx)
		if err != nil {
			return 0, err
		}
		return im.update(ctx, func(tx *graph.Tx, _ graph.Exporter) (int, error) {
			n := 0
			for _, src := range srcs {
				if erased[src.v.ID] {
					im.skip(SkipErased, KindSource, 1)
					continue
				}
				_, err := tx.Source(ctx, user, src.v.ID)
				if err == nil {
					im.skip(SkipHeld, KindSource, 1)
					continue
				}
				if !graph.IsNotFound(err) {
					return 0, err
				}
				if err := tx.InsertSource(ctx, src.v); err != nil {
					return 0, err
				}
				n++
			}
			return n, nil
		})
	case KindEntity:
		return 0, im.readEntities(ctx)
	case KindObservation:
		return 0, im.readObservations(ctx)
	case KindTimeline:
		tls := decodeValid(im, func(tl graph.EntityTimeline) error {
			if err := im.check.id("entity_id", tl.EntityID); err != nil {
				return err
			}
			for _, ev := range tl.Events {
				if ev.UserID != user {
					return fmt.Errorf("an event of user %q in the lines of user %q", ev.UserID, user)
				}
			}
			return nil
		})
		// Only the timelines of the entities this import created: the
		// timeline of an entity the store held is left as it is.
		var mine []graph.EntityTimeline
		n := 0
		for _, tl := range tls {
			if !im.created[tl.v.EntityID] {
				im.skip(SkipHeld, KindTimeline, 1)
				continue
			}
			mine = append(mine, tl.v)
			n += len(tl.v.Events)
		}
		if len(mine) == 0 {
			return 0, nil
		}
		return im.update(ctx, func(tx *graph.Tx, _ graph.Exporter) (int, error) {
			return n, tx.ReplaceEntityTimelines(ctx, user, mine)
		})
	case KindRawFragment:
		fs := decodeValid(im, ownedBy(user, func(f graph.RawFragment) string { return f.UserID }, im.check.rawFragment))
		erased, err := im.erasedInStore(ctx)
		if err != nil {
			return 0, err
		}
		fs = slices.DeleteFunc(fs, func(f lineOf[graph.RawFragment]) bool {
			if erased[f.v.SourceID] || erased[f.v.EntityID] {
				im.skip(SkipErased, KindRawFragment, 1)
				return true
			}
			if !im.created[f.v.EntityID] {
				im.skip(SkipHeld, KindRawFragment, 1)
				return true
			}
			return false
		})
		if len(fs) == 0 {
			return 0, nil
		}
		return im.update(ctx, func(tx *graph.Tx, ex graph.Exporter) (int, error) {
			ids := make([]string, len(fs))
			all := make([]graph.RawFragment, len(fs))
			for i, f := range fs {
				ids[i], all[i] = f.v.ID, f.v
			}
			have, err := ex.RawFragmentsByID(ctx, user, ids)
			if err != nil {
				return 0, err
			}
			missing := without(all, have, func(f graph.RawFragment) string { return f.ID })
			im.skip(SkipHeld, KindRawFragment, len(all)-len(missing))
			if len(missing) == 0 {
				return 0, nil
			}
			return len(missing), tx.InsertRawFragments(ctx, missing)
		})
	case KindRelationship:
		rels := decodeValid(im, ownedBy(user, func(r graph.Relationship) string { return r.UserID }, im.check.relationship))
		erased, err := im.erasedInStore(ctx)
		if err != nil {
			return 0, err
		}
		rels = slices.DeleteFunc(rels, func(r lineOf[graph.Relationship]) bool {
			if erased[r.v.SourceEntityID] || erased[r.v.TargetEntityID] {
				im.skip(SkipErased, KindRelationship, 1)
				return true
			}
			return false
		})
		return im.update(ctx, func(tx *graph.Tx, ex graph.Exporter) (int, error) {
			// Both ends must be entities this import created or the store
			// holds: a relationship of a refused entity is refused too.
			var ends []string
			for _, rl := range rels {
				for _, id := range []string{rl.v.SourceEntityID, rl.v.TargetEntityID} {
					if !im.created[id] && !slices.Contains(ends, id) {
						ends = append(ends, id)
					}
				}
			}
			held := map[string]bool{}
			if len(ends) > 0 {
				es, err := tx.Entities(ctx, user, ends)
				if err != nil {
					return 0, err
				}
				for _, e := range es {
					held[e.ID] = true
				}
			}
			n := 0
			for _, rl := range rels {
				r := rl.v
				if i := slices.IndexFunc([]string{r.SourceEntityID, r.TargetEntityID}, func(id string) bool { return !im.created[id] && !held[id] }); i >= 0 {
					im.refuse(KindRelationship, rl.line, fmt.Sprintf("relationship %s: entity %s is neither in the store nor imported", r.ID, []string{r.SourceEntityID, r.TargetEntityID}[i]))
					continue
				}
				// The periods of the relationship that the store holds.
				stored, err := ex.RelationshipPeriodsAfter(ctx, user, graph.PeriodKey{ID: r.ID}, 1000)
				if err != nil {
					return 0, err
				}
				// A period is keyed by (id, CreatedAt): one the store
				// holds, whatever it holds, is left as it is; so is a
				// relationship the store held before this import.
				if slices.ContainsFunc(stored, func(p graph.Relationship) bool {
					return p.ID == r.ID && (p.CreatedAt.Equal(r.CreatedAt) || !im.createdRels[r.ID])
				}) {
					im.skip(SkipHeld, KindRelationship, 1)
					continue
				}
				if err := tx.PutRelationship(ctx, r); err != nil {
					return 0, err
				}
				im.createdRels[r.ID] = true
				n++
			}
			return n, nil
		})
	case KindRelationshipObservation:
		obs := decodeValid(im, ownedBy(user, func(o graph.RelationshipObservation) string { return o.UserID }, im.check.relationshipObservation))
		erased, err := im.erasedInStore(ctx)
		if err != nil {
			return 0, err
		}
		return im.update(ctx, func(tx *graph.Tx, _ graph.Exporter) (int, error) {
			have := map[string]bool{}
			n := 0
			for _, ol := range obs {
				o := ol.v
				if erased[o.SourceID] {
					im.skip(SkipErased, KindRelationshipObservation, 1)
					continue
				}
				// Only the observations of relationships this import
				// created: those of one the store held are left alone.
				if !im.createdRels[o.RelationshipID] {
					im.skip(SkipHeld, KindRelationshipObservation, 1)
					continue
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
					im.skip(SkipHeld, KindRelationshipObservation, 1)
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
		vs, err := decodeAll[schema.Version](im.batch)
		if err != nil {
			return 0, err
		}
		for _, v := range vs {
			if v.Owner != user {
				return 0, fmt.Errorf("%w: a schema of owner %q in the lines of %q", ErrFormat, v.Owner, user)
			}
		}
		n, err := im.s.Control.ImportSchemaVersions(ctx, vs)
		if err == nil {
			im.skip(SkipHeld, KindSchema, len(vs)-n)
		}
		return n, err
	case KindBlob:
		return 0, im.writeBlobs()
	case KindFile:
		return im.writeFiles(ctx)
	case KindMemory:
		return im.writeMemories(ctx)
	case KindMemoryTombstone:
		return im.writeTombstones(ctx)
	case KindMemoryVersion:
		return im.writeVersions(ctx)
	case KindRow:
		return im.writeRows(ctx)
	case KindAudit:
		if !im.opts.Audit {
			im.skip(SkipNotAsked, KindAudit, len(im.batch))
			return 0, nil
		}
		return im.writeAudit(ctx)
	default:
		return 0, fmt.Errorf("%w: unknown line kind %q", ErrFormat, im.kind)
	}
}

// erasedColumns name, per control-plane table, the columns that hold the
// id of an entity or a source. A row that names one the store erased is
// of erased data (an erasure removes it: EraseContradictions), and a
// contradiction holds the values it is about: an import of an export made
// before the erasure skips it, as it skips the graph's lines.
var erasedColumns = map[string][]string{
	controlplane.TableContradicts.Name:      {"entity_id", "current_source_id", "new_source_id"},
	controlplane.TableRejected.Name:         {"entity_id"},
	controlplane.TableGraphRetractions.Name: {"subject_id", "source_id"},
}

// writeRows writes control-plane rows: agents only when asked for,
// consent rules only when asked for and only those of agents this import
// created, none of an erased entity or source.
func (im *importer) writeRows(ctx context.Context) (int, error) {
	user := im.user
	rows := decodeValid(im, func(r Row) error {
		t, ok := controlplane.TransferTableNamed(r.Table)
		if !ok {
			return fmt.Errorf("unknown table %q", truncate(r.Table, 64))
		}
		if r.Row["user_id"] != user {
			return fmt.Errorf("a %s row of user %v in the lines of user %s", t.Name, r.Row["user_id"], user)
		}
		// A profile is many fields in one column, each bounded when it
		// was set: the line bound is its bound here.
		if t.Name != controlplane.TableProfiles.Name && t.Name != controlplane.TableProfileLog.Name {
			if err := im.check.row(r); err != nil {
				return err
			}
		}
		if t.Name == controlplane.TableGraphTombstones.Name {
			if err := im.check.graphTombstone(r.Row); err != nil {
				return err
			}
		}
		return controlplane.CheckTransferRow(t, r.Row)
	})
	erased, err := im.erasedInStore(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for len(rows) > 0 {
		// Consecutive rows of one table in one call.
		k := 1
		for k < len(rows) && rows[k].v.Table == rows[0].v.Table {
			k++
		}
		t, _ := controlplane.TransferTableNamed(rows[0].v.Table)
		var batch []map[string]any
		for _, r := range rows[:k] {
			switch {
			case t.Name == controlplane.TableAgents.Name && !im.opts.Agents,
				t.Name == controlplane.TableConsentRules.Name && !im.opts.Consent:
				im.skip(SkipNotAsked, KindRow, 1)
			case t.Name == controlplane.TableConsentRules.Name && !im.agents[fmt.Sprint(r.v.Row["agent_id"])]:
				im.skip(SkipNotAsked, KindRow, 1)
			case slices.ContainsFunc(erasedColumns[t.Name], func(c string) bool { s, _ := r.v.Row[c].(string); return erased[s] }):
				im.skip(SkipErased, KindRow, 1)
			default:
				batch = append(batch, r.v.Row)
			}
		}
		rows = rows[k:]
		if len(batch) == 0 {
			continue
		}
		var created []bool
		if t.Name == controlplane.TableGraphTombstones.Name {
			created, err = im.writeGraphTombstones(ctx, batch)
		} else {
			created, err = im.s.Control.ImportRowsEach(ctx, t, batch)
		}
		if err != nil {
			return n, err
		}
		for i, c := range created {
			if !c {
				im.skip(SkipHeld, KindRow, 1)
				continue
			}
			n++
			if t.Name == controlplane.TableAgents.Name {
				im.agents[fmt.Sprint(batch[i]["id"])] = true
			}
		}
	}
	return n, nil
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

// owned checks that a row of the lines of user belongs to user (files and
// memories).
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
	valid := decodeValid(im, ownedBy(im.user, func(m Memory) string { return m.UserID }, im.check.memory))
	ms := make([]Memory, len(valid))
	ids := make([]string, len(valid))
	for i, m := range valid {
		ms[i], ids[i] = m.v, m.v.ID
	}
	if len(ms) == 0 {
		return 0, nil
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
	im.skip(SkipHeld, KindMemory, len(ms)-len(missing))
	missing, err = im.withoutErased(ctx, KindMemory, missing, func(m Memory) string { return m.ID })
	if err != nil || len(missing) == 0 {
		return 0, err
	}
	if missing, err = im.withoutRetracted(ctx, missing); err != nil || len(missing) == 0 {
		return 0, err
	}
	target, all, err := im.embedded(ctx, missing)
	if err != nil {
		return 0, err
	}
	if _, err := im.s.Memories.Save(ctx, target, all...); err != nil {
		return 0, err
	}
	return len(all), nil
}

// embedded returns the memories, in their order, with vectors in one
// space, and that space: those whose vectors are in the space of the
// target's embedder keep them, the others are embedded.
func (im *importer) embedded(ctx context.Context, ms []Memory) (vector.Space, []vector.Memory, error) {
	var target vector.Space
	if im.opts.Embedder != nil {
		target = vector.Space{Embedder: im.opts.Embedder.Name(), Dimension: im.opts.Embedder.Dimension()}
	}
	out := make([]vector.Memory, len(ms))
	var again []int
	for i, m := range ms {
		out[i] = m.Memory
		if len(m.Embedding) > 0 && m.Space.Embedder == target.Embedder && len(m.Embedding) == m.Space.Dimension &&
			(target.Dimension == 0 || target.Dimension == m.Space.Dimension) {
			target.Dimension = m.Space.Dimension
			continue
		}
		out[i].Embedding = nil
		again = append(again, i)
	}
	if len(again) > 0 {
		if im.opts.Embedder == nil {
			return target, nil, errors.New("transfer: memories without vectors of this store's embedder, and no embedder to embed them")
		}
		texts := make([]string, len(again))
		for j, i := range again {
			texts[j] = knowledge.MemoryText(out[i].Title, out[i].Text)
		}
		vecs, err := im.opts.Embedder.Embed(ctx, texts)
		if err != nil {
			return target, nil, fmt.Errorf("transfer: embed memories: %w", err)
		}
		for j, i := range again {
			out[i].Embedding = vecs[j]
			target.Dimension = len(vecs[j])
		}
		im.stats.Embedded += len(again)
	}
	return target, out, nil
}

// erasedIDs returns which of the user's memory ids have a tombstone in
// the store.
func erasedIDs(ctx context.Context, ms *vector.Store, user string, ids []string) (map[string]bool, error) {
	ts, err := ms.Tombstones(ctx, user, ids)
	if err != nil {
		return nil, err
	}
	erased := make(map[string]bool, len(ts))
	for _, t := range ts {
		erased[t.ID] = true
	}
	return erased, nil
}

// withoutErased returns those of ms whose memory has no tombstone in the
// store, and counts the others as skipped for kind.
func (im *importer) withoutErased(ctx context.Context, kind string, ms []Memory, id func(Memory) string) ([]Memory, error) {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = id(m)
	}
	erased, err := erasedIDs(ctx, im.s.Memories, im.user, ids)
	if err != nil {
		return nil, err
	}
	out := slices.DeleteFunc(ms, func(m Memory) bool { return erased[id(m)] })
	im.skip(SkipErased, kind, len(ids)-len(out))
	return out, nil
}

// withoutRetracted returns those of ms the store holds no retracted
// version of, and counts the others as skipped.
func (im *importer) withoutRetracted(ctx context.Context, ms []Memory) ([]Memory, error) {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	vs, err := im.s.Memories.Versions(ctx, im.user, ids)
	if err != nil {
		return nil, err
	}
	retracted := map[string]bool{}
	for _, v := range vs {
		retracted[v.ID] = retracted[v.ID] || v.State == vector.VersionRetracted
	}
	out := slices.DeleteFunc(ms, func(m Memory) bool { return retracted[m.ID] })
	im.skip(SkipRetracted, KindMemory, len(ids)-len(out))
	return out, nil
}

// writeTombstones records what was erased; a tombstone the store holds
// already is kept. The memories they name are erased too when the store
// still holds them: an erasure exported from elsewhere is an erasure here.
func (im *importer) writeTombstones(ctx context.Context) (int, error) {
	if im.s.Memories == nil {
		return 0, errors.New("transfer: the export holds memories and this store keeps none")
	}
	valid := decodeValid(im, ownedBy(im.user, func(t vector.Tombstone) string { return t.UserID }, func(t vector.Tombstone) error {
		return im.check.id("memory id", t.ID)
	}))
	if len(valid) == 0 {
		return 0, nil
	}
	ids := make([]string, len(valid))
	ts := make([]vector.Tombstone, len(valid))
	for i, t := range valid {
		ids[i], ts[i] = t.v.ID, t.v
	}
	held, err := erasedIDs(ctx, im.s.Memories, im.user, ids)
	if err != nil {
		return 0, err
	}
	fresh := slices.DeleteFunc(ts, func(t vector.Tombstone) bool { return held[t.ID] })
	im.skip(SkipHeld, KindMemoryTombstone, len(ts)-len(fresh))
	if len(fresh) == 0 {
		return 0, nil
	}
	// Erase what the store still holds of them, each with its own
	// tombstone's time, actor and reason; InsertTombstones records the
	// others.
	freshIDs := make([]string, len(fresh))
	for i, t := range fresh {
		freshIDs[i] = t.ID
	}
	live, err := im.s.Memories.Get(ctx, im.user, freshIDs)
	if err != nil {
		return 0, err
	}
	versions, err := im.s.Memories.Versions(ctx, im.user, freshIDs)
	if err != nil {
		return 0, err
	}
	holds := map[string]bool{}
	for _, m := range live {
		holds[m.ID] = true
	}
	for _, v := range versions {
		holds[v.ID] = true
	}
	for _, t := range fresh {
		if !holds[t.ID] {
			continue
		}
		_, n, err := im.s.Memories.Erase(ctx, im.user, []string{t.ID}, t.Removal)
		if err != nil {
			return 0, err
		}
		im.erasedCount("memories", n.Memories)
		im.erasedCount("retracted_memories", n.Retracted)
		im.erasedCount("versions", n.Versions)
	}
	if err := im.s.Memories.InsertTombstones(ctx, fresh); err != nil {
		return 0, err
	}
	return len(fresh), nil
}

// writeVersions records retracted memories and replaced content the store
// does not hold yet; those of erased memories are skipped.
func (im *importer) writeVersions(ctx context.Context) (int, error) {
	if im.s.Memories == nil {
		return 0, errors.New("transfer: the export holds memories and this store keeps none")
	}
	valid := decodeValid(im, ownedBy(im.user, func(v MemoryVersion) string { return v.UserID }, func(v MemoryVersion) error {
		if v.State != vector.VersionRetracted && v.State != vector.VersionSuperseded {
			return fmt.Errorf("state %q is neither retracted nor superseded", v.State)
		}
		return im.check.memory(Memory{Memory: v.Memory})
	}))
	if len(valid) == 0 {
		return 0, nil
	}
	ids := make([]string, len(valid))
	for i, v := range valid {
		ids[i] = v.v.ID
	}
	have, err := im.s.Memories.Versions(ctx, im.user, ids)
	if err != nil {
		return 0, err
	}
	key := func(v vector.Version) string { return fmt.Sprint(v.ID, "\x00", v.At.UnixMicro(), "\x00", v.State) }
	held := map[string]bool{}
	for _, v := range have {
		held[key(v)] = true
	}
	erased, err := erasedIDs(ctx, im.s.Memories, im.user, ids)
	if err != nil {
		return 0, err
	}
	var ms []Memory
	var vs []vector.Version
	for _, v := range valid {
		switch {
		case erased[v.v.ID]:
			im.skip(SkipErased, KindMemoryVersion, 1)
		case held[key(v.v.Version)]:
			im.skip(SkipHeld, KindMemoryVersion, 1)
		default:
			ms = append(ms, Memory{Memory: v.v.Memory, Space: v.v.Space})
			vs = append(vs, v.v.Version)
		}
	}
	if len(ms) == 0 {
		return 0, nil
	}
	space, embedded, err := im.embedded(ctx, ms)
	if err != nil {
		return 0, err
	}
	for i := range vs {
		vs[i].Memory = embedded[i]
	}
	if err := im.s.Memories.InsertVersions(ctx, space, vs); err != nil {
		return 0, err
	}
	return len(vs), nil
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
