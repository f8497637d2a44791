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
	p := &packer{budget: budget, out: UserContext{
		BudgetTokens: budget, TokensUsed: budget, Topic: topic, Profile: map[string]any{},
		EntityTypes: []TypeCount{}, Entities: []ContextEntity{}, Notes: in.notes,
		Memories: MemorySection{Available: in.memoriesAvail, Collections: []MemoryCollection{}, Recent: []MemorySummary{}},
		Omitted: Omissions{
			ProfileMembers: len(in.profile), EntityTypes: len(in.types), Collections: len(in.collections),
			Entities: in.readableEntities, Memories: len(in.recent),
		},
	}}
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
		p.cut = true
	}
	// The type inventory and the collections share inventoryShare.
	inventoryLimit := min(p.size()+int(inventoryShare*float64(budget)), budget)
	for _, t := range in.types {
		if p.tryWithin(inventoryLimit, func() { out.EntityTypes = append(out.EntityTypes, t) }, func() { out.EntityTypes = out.EntityTypes[:len(out.EntityTypes)-1] }) {
			out.Omitted.EntityTypes--
		}
	}
	for _, c := range in.collections {
		if p.tryWithin(inventoryLimit, func() { out.Memories.Collections = append(out.Memories.Collections, c) },
			func() { out.Memories.Collections = out.Memories.Collections[:len(out.Memories.Collections)-1] }) {
			out.Omitted.Collections--
		}
	}

	// Names first: entity names, then memory titles.
	shown := make([]rankedEntity, 0, len(in.ranked))
	for _, r := range in.ranked {
		ce := ContextEntity{EntityID: r.entity.ID, EntityType: r.entity.Type, Name: r.entity.CanonicalName, Score: r.score,
			FactsOmitted: len(factOrder(r.entity))}
		if p.try(func() {
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
		if p.try(func() {
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
			if p.try(func() {
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
	}
	for i, text := range texts {
		if text == "" {
			continue
		}
		m := &out.Memories.Recent[i]
		if p.try(func() { m.Text = text }, func() { m.Text = "" }) {
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
}

// size returns the tokens of the response as it stands.
func (p *packer) size() int {
	b, err := json.Marshal(p.out)
	if err != nil {
		// Values come from JSON or from the store; if one cannot be
		// encoded, the addition that brought it is undone.
		return p.budget + 1
	}
	return Tokens(len(b))
}

func (p *packer) fits() bool { return p.size() <= p.budget }

// try makes an addition and keeps it if the response still fits.
func (p *packer) try(add, undo func()) bool { return p.tryWithin(p.budget, add, undo) }

// tryWithin makes an addition and keeps it if the response stays within
// limit tokens.
func (p *packer) tryWithin(limit int, add, undo func()) bool {
	add()
	if p.size() <= limit {
		return true
	}
	undo()
	p.cut = true
	return false
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
