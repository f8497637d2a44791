package transfer

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/vector"
)

// Format names the file format in the header line; Version is the
// version of it this package writes. It reads every version: 1 named
// fields as the Go code did (ID, IsOwner) where 2 names them in
// snake_case (see snake.go); 3 adds what forgetting leaves
// (memory_tombstone and memory_version lines), which 1 and 2 simply lack.
const (
	Format  = "cairn-export"
	Version = 3
)

// The kinds of line, in the order an export writes them for each user.
const (
	KindHeader                  = "header"
	KindUser                    = "user"
	KindSchema                  = "schema"
	KindSource                  = "source"
	KindEntity                  = "entity"
	KindObservation             = "observation"
	KindTimeline                = "timeline"
	KindRawFragment             = "raw_fragment"
	KindRelationship            = "relationship"
	KindRelationshipObservation = "relationship_observation"
	KindBlob                    = "blob"
	KindFile                    = "file"
	// KindMemoryTombstone and KindMemoryVersion come before a user's
	// memories, so that an import knows the erased ids before it meets
	// a memory line (of this file or an older one) that still holds one.
	KindMemoryTombstone = "memory_tombstone"
	KindMemoryVersion   = "memory_version"
	KindMemory          = "memory"
	KindRow             = "row"
	KindAudit           = "audit"
	KindEnd             = "end"
)

// Line is one line of an export: its kind, the user it belongs to (empty
// for the header and the end) and its data.
type Line struct {
	Kind string          `json:"kind"`
	User string          `json:"user,omitempty"`
	Data json.RawMessage `json:"data"`
}

// Header is the data of the first line.
type Header struct {
	Format       string         `json:"format"`
	Version      int            `json:"version"`
	CairnVersion string         `json:"cairn_version"`
	ExportedAt   time.Time      `json:"exported_at"`
	Users        []consent.User `json:"users"`
	Vectors      bool           `json:"vectors"`
	Consent      bool           `json:"consent"`
	Audit        bool           `json:"audit"`
	// Files counts the stored files (blob and file lines) the export
	// holds, so that an import into a store without a bucket fails before
	// writing anything. Absent in exports without files.
	Files int `json:"files,omitempty"`
}

// BlobChunk is how many bytes of a file one blob line holds at most
// (about 1 MiB once in base64), so that neither side holds a large file
// in memory.
const BlobChunk = 768 << 10

// Blob is the data of a blob line: a chunk of a stored file's bytes, at
// Offset; the chunks of a file come in order, before its file line.
type Blob struct {
	FileID string `json:"file_id"`
	Offset int64  `json:"offset"`
	// Data is base64 in the file (encoding/json's []byte).
	Data []byte `json:"data"`
}

// Entity is the data of an entity line: the entity with its identifiers.
type Entity struct {
	graph.Entity
	Identifiers []graph.Identifier
}

// Memory is the data of a memory line: the memory (Embedding set only in
// an export with vectors) and the space of its collection.
type Memory struct {
	vector.Memory
	Space vector.Space
}

// MemoryVersion is the data of a memory_version line: a retracted memory,
// or content an update replaced, with who, when and why (Embedding set
// only in an export with vectors), and the space of its collection.
type MemoryVersion struct {
	vector.Version
	Space vector.Space
}

// Row is the data of a row line: one row of a control-plane table.
type Row struct {
	Table string         `json:"table"`
	Row   map[string]any `json:"row"`
}

// End is the data of the last line: how many lines of each kind came
// before it, so that a truncated file is noticed, and the SHA-256 of every
// line before it (the header included, each with its newline), so that an
// accidental edit is noticed. It is in the last line because an export
// streams: the header is written before the records are read. The sum
// proves nothing against someone who edits a line on purpose, who can
// compute it again; that is why an import checks every line on its own.
type End struct {
	Counts map[string]int `json:"counts"`
	// SHA256 is hex; absent in exports of cairn versions before it.
	SHA256 string `json:"sha256,omitempty"`
}

// sortObservations orders observations by id, so that an export of the
// same store is the same file.
func sortObservations(obs []graph.Observation) {
	slices.SortFunc(obs, func(a, b graph.Observation) int { return strings.Compare(a.ID, b.ID) })
}
