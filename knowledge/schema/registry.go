package schema

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Errors of the schema registry.
var (
	// ErrNotFound means no schema, active or of the named version, exists
	// for the entity type in the scope asked.
	ErrNotFound = errors.New("schema not found")
	// ErrExists means the version is already registered: versions are
	// immutable.
	ErrExists = errors.New("schema version already exists")
)

// Error names the entity type (and version) an ErrNotFound or ErrExists is
// about.
type Error struct {
	Kind       error
	EntityType string
	Version    string
	Scope      string
}

func (e *Error) Error() string {
	switch {
	case errors.Is(e.Kind, ErrExists):
		return fmt.Sprintf("the %s schema of %s already has version %s; versions are immutable, register another version", e.Scope, e.EntityType, e.Version)
	case e.Version != "":
		return fmt.Sprintf("no %s schema of %s at version %s", e.Scope, e.EntityType, e.Version)
	default:
		return fmt.Sprintf("no active schema for entity type %s; register_schema registers one, and store creates one for a new type", e.EntityType)
	}
}

// Unwrap makes errors.Is(err, e.Kind) true.
func (e *Error) Unwrap() error { return e.Kind }

// Version is one stored version of a schema: global (Owner empty) or
// a user's own. A version never changes once stored; only which version of
// an (owner, type) is active does, one at a time.
type Version struct {
	ID         string
	Owner      string
	EntityType string
	Version    string
	// Seq numbers the owner's versions of the type in the order they were
	// stored, from 1.
	Seq       int
	Schema    *Schema
	Active    bool
	CreatedAt time.Time
	// CreatedBy is the agent that registered it, "operator" for cairn admin
	// and "store" or "auto_enhancement" for the versions the data made.
	CreatedBy string
}

// VersionID is the id of an owner's version of a type.
func VersionID(owner, entityType, version string) string {
	return hashID("sch_", owner, entityType, version)
}

// Store persists schema versions, schema recommendations and the
// per-user schema settings (the control plane implements it on SQLite and
// PostgreSQL; NewRegistry keeps them in memory).
type Store interface {
	// ActiveSchemas returns the active versions of the global schemas and
	// of userID's own ("" for the global ones only), ordered by owner then
	// type.
	ActiveSchemas(ctx context.Context, userID string) ([]Version, error)
	// SchemaVersions returns every version of an owner's type, by Seq.
	SchemaVersions(ctx context.Context, owner, entityType string) ([]Version, error)
	// AddSchemaVersion stores v with the next Seq of its (owner, type) and
	// returns it as stored. When v.Active it becomes the active version,
	// and the one active before stops being, in the same transaction. A
	// version the owner already has is an *Error of ErrExists.
	AddSchemaVersion(ctx context.Context, v Version) (Version, error)
	// ActivateSchemaVersion makes a stored version the active one of its
	// (owner, type), atomically; a missing version is an *Error of
	// ErrNotFound.
	ActivateSchemaVersion(ctx context.Context, owner, entityType, version string) error

	// PutRecommendations stores recommendations; one whose id exists keeps
	// its status and, while pending, takes the new confidence and
	// reasoning.
	PutRecommendations(ctx context.Context, rs []Recommendation) error
	// Recommendations returns a user's recommendations for a type, by id.
	Recommendations(ctx context.Context, userID, entityType string) ([]Recommendation, error)
	// SetRecommendationStatus changes a recommendation's status; a missing
	// one is ErrNotFound.
	SetRecommendationStatus(ctx context.Context, userID, id string, status RecommendationStatus) error

	// AutoEnhance reports whether auto-enhancement is on for a user (on
	// unless switched off).
	AutoEnhance(ctx context.Context, userID string) (bool, error)
	// SetAutoEnhance switches a user's auto-enhancement.
	SetAutoEnhance(ctx context.Context, userID string, on bool) error

	// RelationshipTypes returns the relationship types a user registered
	// by using them (RegisterRelationshipType), by name.
	RelationshipTypes(ctx context.Context, userID string) ([]string, error)
	// RegisterRelationshipType registers a relationship type for a user
	// unless it is registered already, and reports whether it registered
	// it; concurrent callers register it once.
	RegisterRelationshipType(ctx context.Context, userID, name string, at time.Time) (created bool, err error)
}

// Registry resolves entity types to schemas: a user's own active schema
// first, then the global one (registered by the operator), then the
// built-in one. The versions live in a Store, so that every process
// of a deployment sees the same schemas; each lookup reads it (For reads
// every schema a user sees in one query, which a call then uses
// throughout).
type Registry struct {
	store   Store
	builtin map[string]*Schema
}

// NewRegistry returns a registry holding the built-in schemas and keeping
// registered versions in memory (tests, and a service without a control
// plane).
func NewRegistry() *Registry { return NewPersistentRegistry(NewMemoryStore()) }

// NewPersistentRegistry returns a registry over a schema store.
func NewPersistentRegistry(store Store) *Registry {
	r := &Registry{store: store, builtin: map[string]*Schema{}}
	for _, s := range builtinSchemas() {
		r.builtin[s.EntityType] = s
	}
	return r
}

// Store returns the registry's schema store.
func (r *Registry) Store() Store { return r.store }

// Register adds a global schema as a new active version registered by the
// operator (see RegisterVersion).
func (r *Registry) Register(ctx context.Context, s *Schema) error {
	_, err := r.RegisterVersion(ctx, "", s, true, "operator", time.Now().UTC().Truncate(time.Microsecond))
	return err
}

// Builtin returns the built-in schema of a type.
func (r *Registry) Builtin(entityType string) (*Schema, bool) {
	s, ok := r.builtin[entityType]
	return s, ok
}

// For returns every schema userID sees, resolved.
func (r *Registry) For(ctx context.Context, userID string) (*Set, error) {
	set := &Set{byType: maps.Clone(r.builtin)}
	active, err := r.store.ActiveSchemas(ctx, userID)
	if err != nil {
		return nil, fmt.Errorf("knowledge: read schemas: %w", err)
	}
	// Global versions first, then the user's, which override them.
	slices.SortStableFunc(active, func(a, b Version) int { return cmp.Compare(len(a.Owner), len(b.Owner)) })
	for _, v := range active {
		if v.Owner != "" && v.Owner != userID {
			continue
		}
		s := v.Schema.Clone()
		s.Owner, s.Version, s.EntityType = v.Owner, v.Version, v.EntityType
		set.byType[v.EntityType] = s
	}
	return set, nil
}

// RelationshipTypes returns the relationship types userID registered by
// using them, by name.
func (r *Registry) RelationshipTypes(ctx context.Context, userID string) ([]string, error) {
	return r.store.RelationshipTypes(ctx, userID)
}

// RegisterRelationshipType registers a relationship type for userID unless
// it is registered already, and reports whether it registered it.
func (r *Registry) RegisterRelationshipType(ctx context.Context, userID, name string, at time.Time) (bool, error) {
	return r.store.RegisterRelationshipType(ctx, userID, name, at)
}

// Lookup returns the schema userID's data of a type follows.
func (r *Registry) Lookup(ctx context.Context, userID, entityType string) (*Schema, bool, error) {
	set, err := r.For(ctx, userID)
	if err != nil {
		return nil, false, err
	}
	s, ok := set.Lookup(entityType)
	return s, ok, nil
}

// Set is the resolved schemas of one user at one moment.
type Set struct {
	byType map[string]*Schema
	// used are relationship types the user registered by using them
	// (Store.RelationshipTypes), where a call has read them.
	used []string
}

// WithUsedRelationshipTypes returns a copy of s that also knows the
// relationship types names, registered by the user's use of them.
func (s *Set) WithUsedRelationshipTypes(names ...string) *Set {
	out := &Set{byType: s.byType, used: slices.Concat(s.used, names)}
	slices.Sort(out.used)
	out.used = slices.Compact(out.used)
	return out
}

// UsedRelationshipTypes returns the relationship types the user registered
// by using them that s knows (see WithUsedRelationshipTypes), sorted.
func (s *Set) UsedRelationshipTypes() []string { return slices.Clone(s.used) }

// Lookup returns the schema of a type.
func (s *Set) Lookup(entityType string) (*Schema, bool) {
	sc, ok := s.byType[entityType]
	return sc, ok
}

// All returns every schema, ordered by entity type.
func (s *Set) All() []*Schema {
	out := slices.Collect(maps.Values(s.byType))
	slices.SortFunc(out, func(a, b *Schema) int { return strings.Compare(a.EntityType, b.EntityType) })
	return out
}

// Types returns every entity type name, sorted.
func (s *Set) Types() []string { return slices.Sorted(maps.Keys(s.byType)) }

// RelationshipType returns a relationship type that is built in, that one
// of the schemas registers, or that the user registered by using it, and
// whether it is acyclic. A type registered by several schemas is acyclic
// when any of them says so; one only used is not.
func (s *Set) RelationshipType(t string, builtin func(string) bool, builtinAcyclic func(string) bool) (RelationshipType, bool) {
	if builtin(t) {
		return RelationshipType{Name: t, Acyclic: builtinAcyclic(t)}, true
	}
	out, found := RelationshipType{Name: t}, false
	for _, sc := range s.byType {
		for _, rt := range sc.RelationshipTypes {
			if rt.Name == t {
				found = true
				out.Acyclic = out.Acyclic || rt.Acyclic
			}
		}
	}
	return out, found || slices.Contains(s.used, t)
}

// memoryStore is a Store in memory.
type memoryStore struct {
	mu       sync.Mutex
	versions map[string][]Version      // by owner + "\x00" + type, in Seq order
	recs     map[string]Recommendation // by user + "\x00" + id
	autoOff  map[string]bool
	relTypes map[string][]string // by user, sorted
}

// NewMemoryStore returns a Store that keeps everything in memory, for
// tests and for a service without a control plane.
func NewMemoryStore() Store {
	return &memoryStore{versions: map[string][]Version{}, recs: map[string]Recommendation{}, autoOff: map[string]bool{},
		relTypes: map[string][]string{}}
}

func (m *memoryStore) ActiveSchemas(_ context.Context, userID string) ([]Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Version
	for _, vs := range m.versions {
		for _, v := range vs {
			if v.Active && (v.Owner == "" || v.Owner == userID) {
				out = append(out, v)
			}
		}
	}
	slices.SortFunc(out, func(a, b Version) int {
		return cmp.Or(strings.Compare(a.Owner, b.Owner), strings.Compare(a.EntityType, b.EntityType))
	})
	return out, nil
}

func (m *memoryStore) SchemaVersions(_ context.Context, owner, entityType string) ([]Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.versions[owner+"\x00"+entityType]), nil
}

func (m *memoryStore) AddSchemaVersion(_ context.Context, v Version) (Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := v.Owner + "\x00" + v.EntityType
	vs := m.versions[key]
	for _, old := range vs {
		if old.Version == v.Version {
			return Version{}, &Error{Kind: ErrExists, EntityType: v.EntityType, Version: v.Version, Scope: ScopeOf(v.Owner)}
		}
	}
	v.Seq = len(vs) + 1
	if v.Active {
		for i := range vs {
			vs[i].Active = false
		}
	}
	m.versions[key] = append(vs, v)
	return v, nil
}

func (m *memoryStore) ActivateSchemaVersion(_ context.Context, owner, entityType, version string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	vs := m.versions[owner+"\x00"+entityType]
	i := slices.IndexFunc(vs, func(v Version) bool { return v.Version == version })
	if i < 0 {
		return &Error{Kind: ErrNotFound, EntityType: entityType, Version: version, Scope: ScopeOf(owner)}
	}
	for j := range vs {
		vs[j].Active = j == i
	}
	return nil
}

func (m *memoryStore) PutRecommendations(_ context.Context, rs []Recommendation) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range rs {
		key := r.UserID + "\x00" + r.ID
		if old, ok := m.recs[key]; ok {
			if old.Status == RecommendationPending {
				old.Confidence, old.Reasoning = r.Confidence, r.Reasoning
				m.recs[key] = old
			}
			continue
		}
		m.recs[key] = r
	}
	return nil
}

func (m *memoryStore) Recommendations(_ context.Context, userID, entityType string) ([]Recommendation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Recommendation
	for _, r := range m.recs {
		if r.UserID == userID && r.EntityType == entityType {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Recommendation) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func (m *memoryStore) SetRecommendationStatus(_ context.Context, userID, id string, status RecommendationStatus) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := userID + "\x00" + id
	r, ok := m.recs[key]
	if !ok {
		return fmt.Errorf("recommendation %s: %w", id, ErrNotFound)
	}
	r.Status = status
	m.recs[key] = r
	return nil
}

func (m *memoryStore) AutoEnhance(_ context.Context, userID string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.autoOff[userID], nil
}

func (m *memoryStore) SetAutoEnhance(_ context.Context, userID string, on bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.autoOff[userID] = !on
	return nil
}

func (m *memoryStore) RelationshipTypes(_ context.Context, userID string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.relTypes[userID]), nil
}

func (m *memoryStore) RegisterRelationshipType(_ context.Context, userID, name string, _ time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i, found := slices.BinarySearch(m.relTypes[userID], name)
	if found {
		return false, nil
	}
	m.relTypes[userID] = slices.Insert(m.relTypes[userID], i, name)
	return true, nil
}
