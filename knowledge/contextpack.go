package knowledge

import (
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/cairnkg/cairn/graph"
)

// Sizes of what a context load shows of one fact or memory.
const (
	maxFactRunes       = 200 // longer strings are cut, with "…"
	maxFactBytes       = 400 // other values whose JSON is longer are left out
	maxMemoryTextRunes = 500
	maxMemoryTitle     = 80
	// profileShare and inventoryShare are the shares of the budget that
	// the profile, and the type and collection inventory, may take, so
	// that neither crowds out the entities and memories.
	profileShare   = 0.3
	inventoryShare = 0.2
)

// pack fits a context load into budget tokens (Tokens of its JSON). It adds
// in order of importance — profile members (up to profileShare of the
// budget), the type inventory and memory collections (up to inventoryShare),
// entity names best first, memory titles, then, only if every name and
// title is shown, entity facts (best entity first) and memory texts — and
// leaves out whatever would go over, counting it in Omitted. Every size is
// measured on the JSON the caller receives. Counters that are printed start
// at their largest value and only shrink, so a measurement taken before a
// counter's last update is never an underestimate.
func pack(budget int, topic string, in contextInput) (UserContext, error) {
	return newPacker(budget, topic, in).pack(in)
}

func newPacker(budget int, topic string, in contextInput) *packer {
	return &packer{budget: budget, out: UserContext{
		BudgetTokens: budget, TokensUsed: budget, Topic: topic, Profile: map[string]any{},
		EntityTypes: []TypeCount{}, Entities: []ContextEntity{}, Notes: in.notes,
		Memories: MemorySection{Available: in.memoriesAvail, Collections: []MemoryCollection{}, Recent: []MemorySummary{}},
		Omitted: Omissions{
			ProfileMembers: len(in.profile), EntityTypes: len(in.types), Collections: len(in.collections),
			Entities: in.readableEntities, Memories: len(in.recent),
		},
	}}
}

func (p *packer) pack(in contextInput) (UserContext, error) {
	budget := p.budget
	out := &p.out
	if !p.fits() {
		out.Notes = nil
		if !p.fits() {
			return UserContext{}, errOverBudget
		}
	}

	// The profile may take up to profileShare of the budget.
	profileLimit := min(p.size()+int(profileShare*float64(budget)), budget)
	for _, k := range sortedKeys(in.profile) {
		out.Profile[k] = in.profile[k]
		if p.size() <= profileLimit {
			out.Omitted.ProfileMembers--
			continue
		}
		delete(out.Profile, k)
		p.exact = false
		p.cut = true
	}
	// The type inventory and the collections share inventoryShare.
	inventoryLimit := min(p.size()+int(inventoryShare*float64(budget)), budget)
	for _, t := range in.types {
		if p.tryWithin(inventoryLimit, jsonLen(t), func() { out.EntityTypes = append(out.EntityTypes, t) }, func() { out.EntityTypes = out.EntityTypes[:len(out.EntityTypes)-1] }) {
			out.Omitted.EntityTypes--
		}
	}
	for _, c := range in.collections {
		if p.tryWithin(inventoryLimit, jsonLen(c), func() { out.Memories.Collections = append(out.Memories.Collections, c) },
			func() { out.Memories.Collections = out.Memories.Collections[:len(out.Memories.Collections)-1] }) {
			out.Omitted.Collections--
		}
	}

	// Names first: entity names, then memory titles.
	shown := make([]rankedEntity, 0, len(in.ranked))
	for _, r := range in.ranked {
		ce := ContextEntity{EntityID: r.entity.ID, EntityType: r.entity.Type, Name: r.entity.CanonicalName, Score: r.score,
			FactsOmitted: len(factOrder(r.entity)) + len(rawOrder(r))}
		if p.try(jsonLen(ce), func() {
			out.Entities = append(out.Entities, ce)
			out.Omitted.EntityFacts += ce.FactsOmitted
		}, func() {
			out.Entities = out.Entities[:len(out.Entities)-1]
			out.Omitted.EntityFacts -= ce.FactsOmitted
		}) {
			out.Omitted.Entities--
			shown = append(shown, r)
		}
	}
	var texts []string
	for _, m := range in.recent {
		sum := MemorySummary{ID: m.ID, Collection: m.Collection, Title: memoryTitle(m), CreatedAt: m.CreatedAt}
		text := clipRunes(m.Text, maxMemoryTextRunes)
		if p.try(jsonLen(sum), func() {
			out.Memories.Recent = append(out.Memories.Recent, sum)
			if text != "" {
				out.Omitted.MemoryTexts++
			}
		}, func() {
			out.Memories.Recent = out.Memories.Recent[:len(out.Memories.Recent)-1]
			if text != "" {
				out.Omitted.MemoryTexts--
			}
		}) {
			out.Omitted.Memories--
			texts = append(texts, text)
		}
	}

	// Then facts, once every name and memory title is shown.
	if len(shown) < len(in.ranked) || len(out.Memories.Recent) < len(in.recent) {
		return p.settle()
	}
	for i, r := range shown {
		ce := &out.Entities[i]
		for _, k := range factOrder(r.entity) {
			v, ok := clipFact(r.entity.Snapshot[k])
			if !ok {
				p.cut = true
				continue
			}
			if p.try(jsonLen(k)+jsonLen(v), func() {
				if ce.Facts == nil {
					ce.Facts = map[string]any{}
				}
				ce.Facts[k] = v
			}, func() {
				delete(ce.Facts, k)
				if len(ce.Facts) == 0 {
					ce.Facts = nil
				}
			}) {
				ce.FactsOmitted--
				out.Omitted.EntityFacts--
			}
		}
		// Then what the schema does not name yet, marked raw: its name
		// is counted twice (the fact and raw_fields) with the list's own
		// bytes, a bound from above.
		for _, k := range rawOrder(r) {
			v, ok := clipFact(r.raw[k])
			if !ok {
				p.cut = true
				continue
			}
			if p.try(2*jsonLen(k)+jsonLen(v)+len(`,"raw_fields":[]`), func() {
				if ce.Facts == nil {
					ce.Facts = map[string]any{}
				}
				ce.Facts[k] = v
				ce.RawFields = append(ce.RawFields, k)
			}, func() {
				delete(ce.Facts, k)
				if len(ce.Facts) == 0 {
					ce.Facts = nil
				}
				ce.RawFields = ce.RawFields[:len(ce.RawFields)-1]
				if len(ce.RawFields) == 0 {
					ce.RawFields = nil
				}
			}) {
				ce.FactsOmitted--
				out.Omitted.EntityFacts--
			}
		}
	}
	for i, text := range texts {
		if text == "" {
			continue
		}
		m := &out.Memories.Recent[i]
		if p.try(jsonLen(text), func() { m.Text = text }, func() { m.Text = "" }) {
			out.Omitted.MemoryTexts--
		}
	}
	return p.settle()
}

// packer is the state of one pack.
type packer struct {
	budget int
	out    UserContext
	cut    bool // something was left out for the budget

	// bytes bounds the size of out's JSON from above, and is that size
	// when exact (but for the counters the caller lowered since). They
	// spare tryWithin encoding the whole response for each addition: a
	// load of 20 entities with their facts and 10 memories makes some
	// hundred additions, and encoding the response after each cost more
	// than the rest of the packing.
	bytes int
	exact bool
	// measureAll turns the bounds off, as the test that proves them
	// changes nothing does.
	measureAll bool
}

// packSlack bounds, in bytes, what an addition adds besides the JSON of
// what it adds (a comma; `,"facts":{` and `}` for an entity's first
// fact, `,"text":` for a memory's text; the digits an entity's omitted
// facts add to a counter), at most 12 and a counter's digits, and what the
// counters lowered after an addition may take away (a facts_omitted
// field, 17 bytes and its digits, and a digit of two counters).
const packSlack = 32

// size returns the tokens of the response as it stands.
func (p *packer) size() int {
	n, ok := p.measure()
	if !ok {
		// Values come from JSON or from the store; if one cannot be
		// encoded, the addition that brought it is undone.
		return p.budget + 1
	}
	return Tokens(n)
}

// measure encodes the response and returns its size in bytes, which
// bytes then holds.
func (p *packer) measure() (int, bool) {
	b, err := json.Marshal(p.out)
	if err != nil {
		return 0, false
	}
	p.bytes, p.exact = len(b), true
	return len(b), true
}

func (p *packer) fits() bool { return p.size() <= p.budget }

// try makes an addition and keeps it if the response still fits.
func (p *packer) try(n int, add, undo func()) bool { return p.tryWithin(p.budget, n, add, undo) }

// tryWithin makes an addition whose value's JSON is n bytes (negative
// when unknown) and keeps it if the response stays within limit tokens.
// It decides as an encoding of the whole response after the addition
// would, without one when the bounds decide: when the response before it,
// plus n and packSlack, fits, the addition is kept; when the response
// before it, measured, plus n less packSlack, does not fit, it is not.
// Near the limit, where additions are refused one after another, that
// costs one encoding for the first and none for the others, whose
// response stays the one measured.
func (p *packer) tryWithin(limit, n int, add, undo func()) bool {
	if n >= 0 && !p.measureAll {
		if !p.exact && Tokens(p.bytes+n+packSlack) > limit {
			// The bound is loose: measure the response as it stands.
			p.measure()
		}
		if Tokens(p.bytes+n+packSlack) <= limit {
			add()
			p.bytes += n + packSlack
			p.exact = false
			return true
		}
		if p.exact && Tokens(p.bytes+n-packSlack) > limit {
			p.cut = true
			return false
		}
	}
	before, exact := p.bytes, p.exact
	add()
	if size, ok := p.measure(); ok && Tokens(size) <= limit {
		return true
	}
	undo()
	p.bytes, p.exact = before, exact
	p.cut = true
	return false
}

// jsonLen returns the size of v's JSON, or -1 if v has none.
func jsonLen(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return -1
	}
	return len(b)
}

// settle marks the response truncated if anything was cut and sets
// TokensUsed to its final size. TokensUsed starts at the budget and
// lowering it never grows the JSON, so this settles in a step or two.
func (p *packer) settle() (UserContext, error) {
	o := p.out.Omitted
	p.out.Truncated = p.cut || o.EntityFacts > 0 || o.MemoryTexts > 0 || o.Memories > 0 || o.ProfileMembers > 0
	for range 8 {
		used := p.size()
		if used == p.out.TokensUsed {
			break
		}
		p.out.TokensUsed = used
	}
	if p.out.TokensUsed > p.budget {
		return UserContext{}, fmt.Errorf("%w: %d > %d tokens", errOverBudget, p.out.TokensUsed, p.budget)
	}
	return p.out, nil
}

// factOrder lists an entity's snapshot fields in the order they are shown,
// by name, leaving out a field that only repeats the entity's name.
func factOrder(e graph.Entity) []string {
	return slices.DeleteFunc(sortedKeys(e.Snapshot), func(k string) bool {
		s, ok := e.Snapshot[k].(string)
		return ok && s == e.CanonicalName
	})
}

// rawOrder is the order the raw fields of a ranked entity are shown in:
// by name, leaving out any its snapshot has (the schema's value wins).
func rawOrder(r rankedEntity) []string {
	return slices.DeleteFunc(sortedKeys(r.raw), func(k string) bool {
		_, inSnapshot := r.entity.Snapshot[k]
		return inSnapshot
	})
}

// clipFact returns a fact as shown: long strings cut, other values whose
// JSON is over maxFactBytes refused.
func clipFact(v any) (any, bool) {
	if s, ok := v.(string); ok {
		return clipRunes(s, maxFactRunes), true
	}
	b, err := json.Marshal(v)
	if err != nil || len(b) > maxFactBytes {
		return nil, false
	}
	return v, true
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

func memoryTitle(m MemorySummary) string {
	if m.Title != "" {
		return clipRunes(m.Title, maxMemoryTitle)
	}
	return clipRunes(m.Text, maxMemoryTitle)
}
