package graph

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// Traversal caps. Traverse never visits more than MaxVisited entities nor
// returns more than MaxResults, whatever the caller asks; it sets Truncated
// when a cap cuts the answer short.
const (
	DefaultMaxVisited = 20_000
	DefaultMaxResults = 1_000
	// MaxHopsLimit is the deepest traversal any caller may ask for.
	MaxHopsLimit = 5
)

// SortEdges orders edges by id, then period start: the order drivers return.
func SortEdges(edges []Edge) {
	slices.SortFunc(edges, func(a, b Edge) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), a.CreatedAt.Compare(b.CreatedAt))
	})
}

// PathQuery asks ShortestPath for a path between two entities.
type PathQuery struct {
	UserID    string
	From, To  string
	Types     []string // nil means any type
	Direction Direction
	At        time.Time // zero means now
}

// ShortestPath returns the entity ids of a shortest path From → … → To over
// live edges of the given types, or nil when there is none. Among paths of
// equal length it returns the same one on every backend: breadth-first
// search that visits entities in id order and edges in id order. The search
// is exhaustive (cycle checks depend on it), so it is bounded only by the
// size of the user's graph.
func (tx *Tx) ShortestPath(ctx context.Context, q PathQuery) ([]string, error) {
	if q.From == q.To {
		return []string{q.From}, nil
	}
	parent := map[string]string{q.From: ""}
	frontier := []string{q.From}
	for len(frontier) > 0 {
		edges, err := tx.Edges(ctx, EdgeQuery{UserID: q.UserID, EntityIDs: frontier, Direction: q.Direction, Types: q.Types, At: q.At})
		if err != nil {
			return nil, err
		}
		next := map[string][]string{} // frontier node → neighbours in edge order
		for _, e := range edges {
			for _, step := range steps(e, q.Direction) {
				next[step[0]] = append(next[step[0]], step[1])
			}
		}
		var reached []string
		for _, from := range frontier {
			for _, to := range next[from] {
				if _, seen := parent[to]; seen {
					continue
				}
				parent[to] = from
				if to == q.To {
					return unwind(parent, to), nil
				}
				reached = append(reached, to)
			}
		}
		slices.Sort(reached)
		frontier = reached
	}
	return nil, nil
}

// steps returns the (from, to) moves an edge allows in a direction.
func steps(e Edge, d Direction) [][2]string {
	switch d {
	case Outbound:
		return [][2]string{{e.SourceEntityID, e.TargetEntityID}}
	case Inbound:
		return [][2]string{{e.TargetEntityID, e.SourceEntityID}}
	default:
		return [][2]string{{e.SourceEntityID, e.TargetEntityID}, {e.TargetEntityID, e.SourceEntityID}}
	}
}

func unwind(parent map[string]string, to string) []string {
	var path []string
	for n := to; n != ""; n = parent[n] {
		path = append(path, n)
	}
	slices.Reverse(path)
	return path
}

// TraverseQuery asks Traverse for the neighbourhood of an entity.
type TraverseQuery struct {
	UserID    string
	Start     string
	Direction Direction // empty means Both
	Types     []string  // relationship types to follow; nil means any
	MaxHops   int       // 1..MaxHopsLimit; 0 means 1
	At        time.Time // zero means now
	// EntityTypes, when non-nil, are the only entity types the traversal may
	// return or pass through (consent).
	EntityTypes []string
	MaxVisited  int // 0 means DefaultMaxVisited
	MaxResults  int // 0 means DefaultMaxResults
}

// Reached is an entity a traversal found, with the hop count at which it
// was first reached and one shortest path to it (entity ids, start first,
// and the relationship ids between them).
type Reached struct {
	EntityID        string
	EntityType      string
	Hops            int
	Path            []string
	RelationshipIDs []string
}

// TraverseResult is what Traverse found.
type TraverseResult struct {
	Entities      []Reached // by Hops, then by entity id
	Relationships []Edge    // every edge followed, ordered by id
	HopsTraversed int       // the deepest hop that reached something new
	Truncated     bool
}

// Traverse walks breadth first from q.Start and reports each entity once,
// at the hop where it was first reached, with one shortest path to it. It
// never returns, nor walks through, an entity whose type is outside
// q.EntityTypes. (Merged entities need no rule: merging ends their edges.)
//
// Results do not depend on the backend, on the order rows were written, or
// on the run: the entities of one hop are taken in id order, and the path
// to each goes through the lowest-id entity of the previous hop that reaches
// it (then the lowest-id edge). When a cap cuts the answer short, it keeps
// the entities that come first in that order, so a capped answer is a
// prefix of the full one.
//
// The start entity must exist (otherwise a *NotFoundError); whether the
// caller may read it is the caller's check. It is not part of the result.
//
// When the driver's transaction is an Expander, Traverse reads the edges it
// may follow in one round trip and walks them in memory; otherwise it is
// TraverseByHop. Both give the same answer.
func (tx *Tx) Traverse(ctx context.Context, q TraverseQuery) (TraverseResult, error) {
	x, ok := tx.DriverTx.(Expander)
	if !ok {
		return tx.TraverseByHop(ctx, q)
	}
	if q.Types != nil && len(q.Types) == 0 {
		return tx.TraverseByHop(ctx, q) // nothing to follow: one read of the start
	}
	q.MaxHops = min(max(q.MaxHops, 1), MaxHopsLimit)
	all, err := x.ExpandEdges(ctx, q)
	if err != nil {
		return TraverseResult{}, endpointErr(err, q.Start)
	}
	return traverse(q, func(frontier []string) ([]Edge, error) {
		return edgesTouching(all, frontier, q.Direction), nil
	})
}

// TraverseByHop is the portable traversal: what Traverse answers, with one
// Edges call per hop. It is the oracle that a driver's Expander is held to.
func (tx *Tx) TraverseByHop(ctx context.Context, q TraverseQuery) (TraverseResult, error) {
	if _, err := tx.Entity(ctx, q.UserID, q.Start); err != nil {
		return TraverseResult{}, endpointErr(err, q.Start)
	}
	return traverse(q, func(frontier []string) ([]Edge, error) {
		return tx.Edges(ctx, EdgeQuery{UserID: q.UserID, EntityIDs: frontier, Direction: q.Direction, Types: q.Types, At: q.At})
	})
}

// edgesTouching returns the edges of all, in their order, that Edges would
// return for entities in direction d: those leaving them (Outbound),
// entering them (Inbound) or either (Both).
func edgesTouching(all []Edge, entities []string, d Direction) []Edge {
	in := make(map[string]bool, len(entities))
	for _, id := range entities {
		in[id] = true
	}
	var out []Edge
	for _, e := range all {
		var touches bool
		switch d {
		case Outbound:
			touches = in[e.SourceEntityID]
		case Inbound:
			touches = in[e.TargetEntityID]
		default:
			touches = in[e.SourceEntityID] || in[e.TargetEntityID]
		}
		if touches {
			out = append(out, e)
		}
	}
	return out
}

// traverse is the breadth-first walk of Traverse, with the edges of each
// hop's frontier from edgesOf.
func traverse(q TraverseQuery, edgesOf func(frontier []string) ([]Edge, error)) (TraverseResult, error) {
	maxHops := min(max(q.MaxHops, 1), MaxHopsLimit)
	maxVisited := cmp.Or(q.MaxVisited, DefaultMaxVisited)
	maxResults := cmp.Or(q.MaxResults, DefaultMaxResults)
	allowed := func(string) bool { return true }
	if q.EntityTypes != nil {
		set := map[string]bool{}
		for _, t := range q.EntityTypes {
			set[t] = true
		}
		allowed = func(t string) bool { return set[t] }
	}
	res := TraverseResult{Entities: []Reached{}, Relationships: []Edge{}}
	visited := map[string]Reached{q.Start: {EntityID: q.Start, Path: []string{q.Start}}}
	followed := map[string]bool{}
	frontier := []string{q.Start}
	for hop := 1; hop <= maxHops && len(frontier) > 0 && !res.Truncated; hop++ {
		edges, err := edgesOf(frontier)
		if err != nil {
			return TraverseResult{}, err
		}
		moves := movesFrom(edges, q.Direction, allowed)
		// The first arrival at each new entity: frontier in id order, then
		// edges in id order.
		arrivals := map[string]move{}
		var fresh []string
		for _, from := range frontier {
			for _, m := range moves[from] {
				if _, seen := visited[m.to]; seen {
					continue
				}
				if _, ok := arrivals[m.to]; !ok {
					arrivals[m.to] = m
					fresh = append(fresh, m.to)
				}
			}
		}
		slices.Sort(fresh)
		if room := max(0, min(maxVisited-len(visited), maxResults-len(res.Entities))); len(fresh) > room {
			fresh, res.Truncated = fresh[:room], true
		}
		for _, to := range fresh {
			m := arrivals[to]
			prev := visited[m.from]
			r := Reached{
				EntityID: to, EntityType: m.toType, Hops: hop,
				Path:            append(slices.Clip(prev.Path), to),
				RelationshipIDs: append(slices.Clip(prev.RelationshipIDs), m.edge.ID),
			}
			visited[to] = r
			res.Entities = append(res.Entities, r)
		}
		if len(fresh) > 0 {
			res.HopsTraversed = hop
		}
		// The edges followed: from the frontier to every entity the
		// traversal holds, new or not.
		for _, from := range frontier {
			for _, m := range moves[from] {
				if _, ok := visited[m.to]; ok && !followed[m.edge.ID] {
					followed[m.edge.ID] = true
					res.Relationships = append(res.Relationships, m.edge)
				}
			}
		}
		frontier = fresh
	}
	SortEdges(res.Relationships)
	return res, nil
}

// move is one step a traversal can take along an edge.
type move struct {
	from, to, toType string
	edge             Edge
}

// movesFrom indexes the steps edges allow in a direction by the entity they
// leave, keeping only steps to entities of allowed types, in edge order.
func movesFrom(edges []Edge, d Direction, allowed func(entityType string) bool) map[string][]move {
	moves := map[string][]move{}
	for _, e := range edges {
		for _, s := range steps(e, d) {
			toType := e.SourceType
			if s[1] == e.TargetEntityID {
				toType = e.TargetType
			}
			if allowed(toType) {
				moves[s[0]] = append(moves[s[0]], move{from: s[0], to: s[1], toType: toType, edge: e})
			}
		}
	}
	return moves
}
