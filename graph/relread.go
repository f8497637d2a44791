package graph

import "context"

// knownRelationship is what a transaction knows of a relationship id: its
// newest period, or that it has none.
type knownRelationship struct {
	rel   Relationship
	found bool
}

// prefetchRelationships reads the relationships with these ids in one
// Relationships call, so that the transaction's next lookups of them by
// CreateRelationship (one per acyclic edge of a batch) need no query:
// the ids not found are known to be absent. What the transaction writes
// afterwards (PutRelationship, PutRelationships) keeps them current.
func (tx *Tx) prefetchRelationships(ctx context.Context, userID string, ids []string) error {
	found, err := tx.DriverTx.Relationships(ctx, userID, ids)
	if err != nil {
		return err
	}
	if tx.rels == nil {
		tx.rels = make(map[entityKey]knownRelationship, len(ids))
	}
	for _, id := range ids {
		tx.rels[entityKey{userID, id}] = knownRelationship{}
	}
	for _, r := range found {
		tx.rels[entityKey{userID, r.ID}] = knownRelationship{rel: r, found: true}
	}
	return nil
}

// knownRelationshipOf answers a lookup of id from what
// prefetchRelationships read, when it holds id: the relationship (its maps
// the caller's own), or a *NotFoundError.
func (tx *Tx) knownRelationshipOf(userID, id string) (Relationship, bool, error) {
	k, ok := tx.rels[entityKey{userID, id}]
	switch {
	case !ok:
		return Relationship{}, false, nil
	case !k.found:
		return Relationship{}, true, &NotFoundError{What: "relationship", ID: id}
	}
	return cloneRelationship(k.rel), true, nil
}

// remember keeps what prefetchRelationships read current after r is
// written: r is the newest period unless an older one was rewritten.
func (tx *Tx) remember(r Relationship) {
	key := entityKey{r.UserID, r.ID}
	k, ok := tx.rels[key]
	if !ok {
		return
	}
	if !k.found || !r.CreatedAt.Before(k.rel.CreatedAt) {
		tx.rels[key] = knownRelationship{rel: cloneRelationship(r), found: true}
	}
}

// PutRelationship is DriverTx.PutRelationship; it keeps what
// prefetchRelationships read current.
func (tx *Tx) PutRelationship(ctx context.Context, r Relationship) error {
	if err := tx.DriverTx.PutRelationship(ctx, r); err != nil {
		return err
	}
	tx.remember(r)
	tx.relationshipsChanged(r)
	return nil
}

// PutRelationships is DriverTx.PutRelationships; it keeps what
// prefetchRelationships read current.
func (tx *Tx) PutRelationships(ctx context.Context, rs []Relationship) error {
	if err := tx.DriverTx.PutRelationships(ctx, rs); err != nil {
		return err
	}
	for _, r := range rs {
		tx.remember(r)
	}
	tx.relationshipsChanged(rs...)
	return nil
}
