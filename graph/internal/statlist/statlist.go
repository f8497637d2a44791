// Package statlist builds the lists of entity statistics that the SQL graph
// drivers read for a context load: every entity of a user, tens of
// thousands of rows in which a few type names repeat, each with a short
// text signature, and their degrees counted from a second query. It keeps
// each type name once, the signatures in shared buffers and the list in
// blocks copied once at the end, so that a row costs one allocation, its
// id, where scanning each value into a value of its own cost four and the
// growing list copied itself over and over.
//
// The drivers scan each row's type, signature and ids as bytes that are
// valid only until the next row (sql.RawBytes, pgtype.DriverBytes); the
// functions here copy what they keep.
package statlist

import "github.com/cairnkg/cairn/graph"

// Names keeps one string per distinct name.
type Names map[string]string

// Intern returns the string equal to b, made once.
func (n Names) Intern(b []byte) string {
	if s, ok := n[string(b)]; ok { // a lookup by string(b) does not allocate
		return s
	}
	s := string(b)
	n[s] = s
	return s
}

// blockLen is how many statistics a block of a List holds.
const blockLen = 1024

// List accumulates entity statistics in the order they are added. The zero
// value is empty and ready to use.
type List struct {
	types Names
	sigs  []byte
	full  [][]graph.EntityStat
	last  []graph.EntityStat
	n     int
}

// Add appends e with its type's name typ and its text signature sig, which
// it copies (e.Type and e.TextSig are ignored).
func (l *List) Add(e graph.EntityStat, typ, sig []byte) {
	if l.types == nil {
		l.types = Names{}
	}
	e.Type = l.types.Intern(typ)
	e.TextSig = nil
	if len(sig) > 0 {
		if len(l.sigs)+len(sig) > cap(l.sigs) {
			l.sigs = make([]byte, 0, 64*len(sig))
		}
		at := len(l.sigs)
		l.sigs = append(l.sigs, sig...)
		e.TextSig = l.sigs[at:len(l.sigs):len(l.sigs)] // full: an append copies
	}
	if len(l.last) == cap(l.last) {
		if l.last != nil {
			l.full = append(l.full, l.last)
		}
		l.last = make([]graph.EntityStat, 0, blockLen)
	}
	l.last = append(l.last, e)
	l.n++
}

// Stats returns every statistic added, in order; never nil.
func (l *List) Stats() []graph.EntityStat {
	if len(l.full) == 0 && l.last != nil {
		return l.last
	}
	out := make([]graph.EntityStat, 0, l.n)
	for _, b := range l.full {
		out = append(out, b...)
	}
	return append(out, l.last...)
}

// Degrees adds counted relationships to the Degrees of a list of
// statistics.
type Degrees struct {
	stats []graph.EntityStat
	at    map[string]int
	types Names
}

// NewDegrees returns a Degrees that adds to stats.
func NewDegrees(stats []graph.EntityStat) *Degrees {
	at := make(map[string]int, len(stats))
	for i, e := range stats {
		at[e.ID] = i
	}
	return &Degrees{stats: stats, at: at, types: Names{}}
}

// Add counts n relationships between the entity id and entities of type
// other; an id not in the list is ignored.
func (d *Degrees) Add(id, other []byte, n int) {
	i, ok := d.at[string(id)]
	if !ok {
		return
	}
	e := &d.stats[i]
	e.Degrees = graph.AddDegree(e.Degrees, d.types.Intern(other), n)
}
