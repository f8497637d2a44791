package knowledge_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/schema"
)

var (
	orderSeed     = flag.Uint64("order.seed", 1, "seed of the first program TestIndependentStepsCommute draws; program i uses seed+i")
	orderPrograms = flag.Int("order.programs", 0, "how many programs TestIndependentStepsCommute draws (0: its default)")
)

// TestIndependentStepsCommute is issue 37's property test of the truth
// model: any program of stores, corrections, merges, relationships
// created with metadata, retractions and undos of retractions leaves the
// same entities and relationships in every order of its steps that keeps
// the steps' dependencies.
//
// A program (genOrderProgram) is 20 steps drawn from a seed over four
// companies, whose schema has a field of every merge policy (name and
// industry last_write, address most_specific, employees highest_priority,
// aliases merge_array) and a timeline date (founded_date), with
// relationships of one type (SUPPLIES, registered by its use) between two
// of them that are not one when the step is drawn, with one or two of three
// metadata fields, each set to a value no other step gives. It runs in its
// own order and in two random orders that keep its dependencies (random
// topological orders of its dependency graph), each on a store of its own
// as the same user: an observation's id derives from its source's, which
// derives from the user, and ties between observations go to the lowest
// id. The same stores serve every program, each program running as a
// user of its own: every query is scoped by user, so a new user is a fresh
// store to the truth model, and a new PostgreSQL database costs about
// 0.3 s of CPU to copy. The clock moves a second before every step, as it
// would between calls.
//
// Step b depends on an earlier step a (a must run first) when:
//
//   - b corrects entity X or merges into or out of X, and a is the first
//     store that names X: X must exist;
//   - b merges X into another entity, and a corrected X or merged into X:
//     X must not be merged yet;
//   - b and a correct the same field of entities that end up as one (the
//     same entity, or merged together by the program): the latest
//     correction wins, and a correction's time is when it is made (the API
//     gives it no observed_at);
//   - b retracts, or undoes the retraction of, observations that a made (a
//     store's observation of one entity, all of a store's source, a
//     correction's observation, a relate step's observation, named with
//     the relationship it was made on, or all of its source): they must
//     exist;
//   - b and a both retract or undo the retraction of one observation: the
//     last of them decides whether it counts;
//   - b relates X and Y, a relates entities that end up as the same two
//     (in the same direction) and both set a metadata field: the latest
//     create wins, and a create's time is when it is made;
//   - a relates X and Y that the program's merges make one, and b is a
//     later merge among the entities that end up as X: before those
//     merges the relationship is created and then dropped (a merge drops
//     an edge that would be a loop), after them it would be a loop on the
//     merged entity, which is another graph;
//   - b relates X and Y, and a is the first store that names X or Y.
//
// Everything else is independent. In particular a store depends on no
// step: it carries its own observed_at (provenance.extracted_at) and
// priority, so the reducer orders it by data, not by arrival; a store of a
// merged entity's identity lands on the merge target whether it comes
// before the merge (which moves it) or after; a retraction names
// observations by id, wherever a merge moved them; a relationship may be
// created before a merge of one of its ends (the merge moves it, carrying
// its observations, with their own times, to the target) or after it (it
// lands on the target), and a retraction of its observation or source, or
// its undo, may come before or after that merge, naming the relationship
// the observation was made on: a retraction holds for the copies a merge
// makes (knowledge's moveRelationship); a store may repeat an
// earlier one's content exactly, and whichever of the two runs second is
// deduplicated. No correction gives a field the value a correction gave it
// before: such a correction changes nothing (Correct is idempotent), and
// which of two equal corrections then holds the field would depend on
// their order.
//
// After each run it reads every entity of the user, merged ones included,
// and compares, by identity: the snapshot, canonical name and provenance
// (the winning observation named by the step that made it, since a
// correction's id depends on its time), the count of observations that
// count, every observation the entity holds (retracted ones too), and
// where each merged entity went; then every live relationship, by type and
// its ends' identities: its metadata, provenance and every observation it
// holds, each named by the relate step whose source made it (a merge's
// copy keeps its source), and the count of those that count (the
// relationships a merge ended are not compared: what they hold depends on
// when they ended); then which entities each name of the
// program finds (identifiers), the timeline events with the step whose
// source each came from, and which observations are retracted. Of a
// merged entity only where it went and what it holds are compared: its row
// keeps the snapshot it had when it was merged, which depends on what had
// happened by then; reads of its id answer where it went instead (only a
// listing with IncludeMerged shows that snapshot).
//
// A failure prints the program's seed, its steps with their dependencies,
// the order and the command that runs that program alone (-order.seed=SEED
// -order.programs=1); a larger -order.programs explores more programs.
// Under the race detector it runs 8 programs, else 30.
func TestIndependentStepsCommute(t *testing.T) {
	const steps, orders = 20, 2
	programs := 30
	if raceEnabled {
		programs = 8
	}
	if *orderPrograms > 0 {
		programs = *orderPrograms
	}
	forEachMemoryBackend(t, func(t *testing.T, b memoryBackend) {
		stores := make([]memoryStores, 1+orders)
		for k := range stores {
			stores[k] = b.open(t)
		}
		kinds := map[stepKind]int{}
		swapped, relRetracts := 0, 0
		for i := range programs {
			p := genOrderProgram(*orderSeed+uint64(i), steps)
			for _, s := range p.steps {
				kinds[s.kind]++
				if (s.kind == stepRetract || s.kind == stepUndo) && p.steps[s.target].kind == stepRelate {
					relRetracts++
				}
			}
			user := fmt.Sprintf("user-order-%d", p.seed)
			rerun := fmt.Sprintf("rerun alone: go test -run '%s' ./knowledge/ -order.seed=%d -order.programs=1", t.Name(), p.seed)
			own := make([]int, len(p.steps))
			for k := range own {
				own[k] = k
			}
			want, err := runOrder(t, stores[0], p, own, user)
			if err != nil {
				t.Fatalf("program seed %d in its own order: %v\n%s\n%s", p.seed, err, p, rerun)
			}
			rng := rand.New(rand.NewPCG(p.seed, 2))
			for k := 1; k <= orders; k++ {
				order := p.topologicalOrder(rng)
				swapped += inversions(order)
				got, err := runOrder(t, stores[k], p, order, user)
				if err != nil {
					t.Fatalf("program seed %d in order %v: %v\n%s\n%s", p.seed, order, err, p, rerun)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("program seed %d: order %v gives other entities than the program's own order (-own +reordered):\n%s\n%s\n%s",
						p.seed, order, diff, p, rerun)
				}
			}
		}
		t.Logf("%d programs, steps %v (%d retractions or undos of relationships' observations), %d pairs of steps swapped in %d orders",
			programs, kinds, relRetracts, swapped, programs*orders)
		if programs < 8 {
			return
		}
		// The generator must keep exercising every kind of step, and the
		// orders must move steps: a program that only stores, or orders that
		// are the program's own, would prove nothing.
		for k := stepStore; k <= stepRelate; k++ {
			if kinds[k] < programs/2 {
				t.Errorf("only %d %s steps in %d programs: the programs exercise too little", kinds[k], k, programs)
			}
		}
		if relRetracts < programs/4 {
			t.Errorf("only %d retractions or undos of relationships' observations in %d programs", relRetracts, programs)
		}
		if swapped < programs*orders*steps {
			t.Errorf("only %d pairs of steps swapped in %d orders: the orders are too close to the programs'", swapped, programs*orders)
		}
	})
}

// stepKind is what a step of an order program does.
type stepKind int

const (
	stepStore stepKind = iota
	stepCorrect
	stepMerge
	stepRetract
	stepUndo
	stepRelate
)

func (k stepKind) String() string {
	return [...]string{"store", "correct", "merge", "retract", "undo", "relate"}[k]
}

// orderRelType is the type of the relationships programs create: one the
// user registers by using it, not acyclic.
const orderRelType = "SUPPLIES"

// obsRef names an observation by the step that made it: a store step's
// observation of its i-th entity, or a correction step's (i = 0). A store
// that repeats an earlier one's content makes (or finds) that one's
// observations, and names them by that step.
type obsRef struct{ step, i int }

// orderStep is one step of an order program.
type orderStep struct {
	kind stepKind
	// deps are the earlier steps this one depends on.
	deps []int

	// A store: the request, the identity of each of its entities, and the
	// step whose content it repeats (its own index for an original).
	req     knowledge.StoreRequest
	names   []string
	repeats int

	// A correction of field of entity, to value.
	entity, field string
	value         any

	// A merge of from into to; a relate step's relationship from → to,
	// with meta.
	from, to string
	meta     map[string]any

	// A retraction or an undo: the observations of step target (a store, a
	// correction or a relate step), the one of its entity obsIndex (0 for
	// a correction's, or a relate step's, named with its relationship), or
	// with obsIndex -1 every observation of the store's (or the relate
	// step's) source.
	target, obsIndex int
}

// orderProgram is a program of steps, drawn from seed, in the order that
// defines it: every step's dependencies come before it.
type orderProgram struct {
	seed  uint64
	steps []orderStep
}

// orderCompanies are the identities of a program's entities (their
// normalised names).
var orderCompanies = []string{"acme", "globex", "initech", "umbrella"}

// orderT0 is the earliest observed_at a store gives; stores observe at it
// or an hour or two later, so that stores often tie on time.
var orderT0 = time.Date(2026, 2, 1, 8, 0, 0, 0, time.UTC)

// genOrderProgram draws a program of n steps from seed, valid in its own
// order (it corrects and merges only entities that exist and are not merged
// away, and retracts only observations made before), with the dependencies
// TestIndependentStepsCommute describes.
func genOrderProgram(seed uint64, n int) orderProgram {
	rng := rand.New(rand.NewPCG(seed, 1))
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	p := orderProgram{seed: seed}
	var (
		creator     = map[string]int{} // identity → the first store that names it
		mergedInto  = map[string]string{}
		liveUses    = map[string][]int{} // identity → the steps that needed it not merged
		originals   []int                // store steps that are not repeats
		retractable []int                // original stores, corrections and relate steps
		relates     []int                // relate steps
		retracts    []int                // retraction steps
		lastTouch   = map[obsRef]int{}   // observation → the last retract or undo of it
	)
	live := func() []string {
		var out []string
		for _, name := range orderCompanies {
			if _, ok := creator[name]; ok && mergedInto[name] == "" {
				out = append(out, name)
			}
		}
		return out
	}
	for i := range n {
		// 40% stores, 13% corrections, 10% merges, 11% relationships
		// created, 16% retractions, 10% undos; a store instead when there
		// is nothing to act on.
		kind := stepStore
		switch r := rng.IntN(100); {
		case i == 0 || r < 40:
		case r < 53:
			if len(live()) > 0 {
				kind = stepCorrect
			}
		case r < 63:
			if len(live()) > 1 {
				kind = stepMerge
			}
		case r < 74:
			if len(live()) > 1 {
				kind = stepRelate
			}
		case r < 90:
			if len(retractable) > 0 {
				kind = stepRetract
			}
		default:
			if len(retracts) > 0 {
				kind = stepUndo
			}
		}
		s := orderStep{kind: kind, repeats: i, obsIndex: -1}
		switch kind {
		case stepStore:
			if len(originals) > 0 && rng.IntN(10) == 0 {
				orig := p.steps[originals[rng.IntN(len(originals))]]
				s.req, s.names, s.repeats = orig.req, orig.names, orig.repeats
				break
			}
			s.req, s.names = genOrderStore(rng, i)
			for _, name := range s.names {
				if _, ok := creator[name]; !ok {
					creator[name] = i
				}
			}
			originals = append(originals, i)
			retractable = append(retractable, i)
		case stepCorrect:
			s.entity = pick(live())
			s.field = pick([]string{"name", "industry", "address", "employees", "aliases", "founded_date"})
			s.value = orderCorrection(s.field, i)
			s.deps = append(s.deps, creator[s.entity])
			liveUses[s.entity] = append(liveUses[s.entity], i)
			retractable = append(retractable, i)
		case stepMerge:
			ls := live()
			from := rng.IntN(len(ls))
			to := (from + 1 + rng.IntN(len(ls)-1)) % len(ls)
			s.from, s.to = ls[from], ls[to]
			s.deps = append(s.deps, creator[s.from], creator[s.to])
			s.deps = append(s.deps, liveUses[s.from]...)
			liveUses[s.to] = append(liveUses[s.to], i)
			mergedInto[s.from] = s.to
		case stepRelate:
			// Between two entities that are not one now; it needs
			// them to exist, not to be unmerged (a merged end resolves
			// to its target).
			ls := live()
			from := rng.IntN(len(ls))
			to := (from + 1 + rng.IntN(len(ls)-1)) % len(ls)
			s.from, s.to = ls[from], ls[to]
			s.deps = append(s.deps, creator[s.from], creator[s.to])
			s.meta = map[string]any{}
			for _, k := range rng.Perm(3)[:1+rng.IntN(2)] {
				key := []string{"tier", "region", "terms"}[k]
				s.meta[key] = fmt.Sprintf("%s by step %d", key, i)
			}
			retractable = append(retractable, i)
			relates = append(relates, i)
		case stepRetract, stepUndo:
			if kind == stepRetract {
				// Two in five of a relationship's, when there is one:
				// they are fewer than stores.
				s.target = retractable[rng.IntN(len(retractable))]
				if len(relates) > 0 && rng.IntN(5) < 2 {
					s.target = relates[rng.IntN(len(relates))]
				}
				switch t := p.steps[s.target]; t.kind {
				case stepStore:
					s.obsIndex = rng.IntN(len(t.names)+1) - 1
				case stepRelate:
					s.obsIndex = rng.IntN(2) - 1
				default:
					s.obsIndex = 0
				}
				retracts = append(retracts, i)
			} else {
				r := p.steps[retracts[rng.IntN(len(retracts))]]
				s.target, s.obsIndex = r.target, r.obsIndex
			}
			s.deps = append(s.deps, s.target)
			for _, ref := range p.refs(s.target, s.obsIndex) {
				if last, ok := lastTouch[ref]; ok {
					s.deps = append(s.deps, last)
				}
				lastTouch[ref] = i
			}
		}
		p.steps = append(p.steps, s)
	}
	// Corrections of one field of entities that end up as one are ordered.
	final := func(name string) string {
		for mergedInto[name] != "" {
			name = mergedInto[name]
		}
		return name
	}
	lastCorrection := map[[2]string]int{}
	for i, s := range p.steps {
		if s.kind != stepCorrect {
			continue
		}
		key := [2]string{final(s.entity), s.field}
		if last, ok := lastCorrection[key]; ok {
			p.steps[i].deps = append(p.steps[i].deps, last)
		}
		lastCorrection[key] = i
	}
	// Relationships created with a field in common between entities that
	// end up as the same two keep their order: the latest wins, and a
	// create's time is when it is made. A relationship whose ends end up
	// as one is created before every merge that joins them (after them it
	// would be a loop on the merged entity, before them it is dropped):
	// before every later merge among the entities that end up as its
	// ends.
	lastRelate := map[[3]string]int{}
	for i, s := range p.steps {
		if s.kind != stepRelate {
			continue
		}
		from, to := final(s.from), final(s.to)
		for key := range s.meta {
			k := [3]string{from, to, key}
			if last, ok := lastRelate[k]; ok {
				p.steps[i].deps = append(p.steps[i].deps, last)
			}
			lastRelate[k] = i
		}
		if from != to {
			continue
		}
		for j := i + 1; j < len(p.steps); j++ {
			if m := p.steps[j]; m.kind == stepMerge && final(m.from) == from {
				p.steps[j].deps = append(p.steps[j].deps, i)
			}
		}
	}
	for i := range p.steps {
		slices.Sort(p.steps[i].deps)
		p.steps[i].deps = slices.Compact(p.steps[i].deps)
	}
	return p
}

// genOrderStore draws the store call of step i: one or two companies, each
// with its name spelt one of three ways (all the same identity) and a random
// share of the other fields, at a random one of three times and four
// priorities. Its provenance names the step, so that no two drawn calls are
// the same content.
func genOrderStore(rng *rand.Rand, i int) (knowledge.StoreRequest, []string) {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	some := func() bool { return rng.IntN(2) == 0 }
	ents := make([]map[string]any, 1+rng.IntN(2))
	names := make([]string, len(ents))
	for j := range ents {
		name := orderCompanies[rng.IntN(len(orderCompanies))]
		names[j] = name
		e := map[string]any{"entity_type": "company",
			"name": pick(name, strings.ToUpper(name), strings.ToUpper(name[:1])+name[1:]+".")}
		if some() {
			e["industry"] = pick("software", "retail", "energy")
		}
		if some() {
			e["address"] = pick("1 Main St", "1 Main Street, Springfield", "PO Box 9")
		}
		if some() {
			e["employees"] = json.Number(pick("10", "20", "30"))
		}
		if some() {
			var aliases []any
			for range 1 + rng.IntN(2) {
				aliases = append(aliases, pick("A", "B", "C"))
			}
			e["aliases"] = aliases
		}
		if rng.IntN(4) == 0 {
			e["founded_date"] = pick("1990-01-01", "2001-06-15")
		}
		ents[j] = e
	}
	req := knowledge.StoreRequest{Entities: ents, Provenance: map[string]any{
		"extracted_at":      orderT0.Add(time.Duration(rng.IntN(3)) * time.Hour).Format(time.RFC3339),
		"extractor_version": fmt.Sprintf("step-%d", i),
	}}
	if c := rng.IntN(4); c > 0 {
		prio := []int{50, 100, 200}[c-1]
		req.SourcePriority = &prio
	}
	return req, names
}

// orderCorrection is the value the correction of step i gives field: a
// value of the field's type that no other step gives.
func orderCorrection(field string, i int) any {
	switch field {
	case "employees":
		return json.Number(fmt.Sprint(1000 + i))
	case "aliases":
		return []any{fmt.Sprintf("alias %d", i)}
	case "founded_date":
		return fmt.Sprintf("19%02d-01-01", i)
	default:
		return fmt.Sprintf("%s by step %d", field, i)
	}
}

// names are the names an entity of the program may be found under: the
// companies' and those that corrections give.
func (p orderProgram) names() []string {
	names := slices.Clone(orderCompanies)
	for _, s := range p.steps {
		if s.kind == stepCorrect && s.field == "name" {
			names = append(names, s.value.(string))
		}
	}
	return names
}

// refs are the observations a retraction of (target, obsIndex) names.
func (p orderProgram) refs(target, obsIndex int) []obsRef {
	t := p.steps[target]
	if t.kind != stepStore {
		return []obsRef{{target, 0}}
	}
	if obsIndex >= 0 {
		return []obsRef{{target, obsIndex}}
	}
	refs := make([]obsRef, len(t.names))
	for i := range refs {
		refs[i] = obsRef{target, i}
	}
	return refs
}

// topologicalOrder returns a random order of the program's steps in which
// every step comes after the steps it depends on: at each point, a step
// drawn from those whose dependencies have all run.
func (p orderProgram) topologicalOrder(rng *rand.Rand) []int {
	waiting := make([]int, len(p.steps))
	next := make([][]int, len(p.steps))
	var ready []int
	for i, s := range p.steps {
		waiting[i] = len(s.deps)
		for _, d := range s.deps {
			next[d] = append(next[d], i)
		}
		if len(s.deps) == 0 {
			ready = append(ready, i)
		}
	}
	order := make([]int, 0, len(p.steps))
	for len(ready) > 0 {
		k := rng.IntN(len(ready))
		i := ready[k]
		ready = slices.Delete(ready, k, k+1)
		order = append(order, i)
		for _, j := range next[i] {
			if waiting[j]--; waiting[j] == 0 {
				ready = append(ready, j)
			}
		}
	}
	return order
}

// inversions counts the pairs of steps that order runs the other way
// round from the program.
func inversions(order []int) int {
	n := 0
	for i := range order {
		for j := i + 1; j < len(order); j++ {
			if order[i] > order[j] {
				n++
			}
		}
	}
	return n
}

// String lists the program's steps with their dependencies, for failures.
func (p orderProgram) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "program seed %d:\n", p.seed)
	for i, s := range p.steps {
		fmt.Fprintf(&b, "  %2d %-7s ", i, s.kind)
		switch s.kind {
		case stepStore:
			if s.repeats != i {
				fmt.Fprintf(&b, "(repeats %d) ", s.repeats)
			}
			prio := "default"
			if s.req.SourcePriority != nil {
				prio = fmt.Sprint(*s.req.SourcePriority)
			}
			fmt.Fprintf(&b, "at %v priority %s:", s.req.Provenance["extracted_at"], prio)
			for _, e := range s.req.Entities {
				fields := map[string]any{}
				for k, v := range e {
					if k != "entity_type" {
						fields[k] = v
					}
				}
				fmt.Fprintf(&b, " %v", fields)
			}
		case stepCorrect:
			fmt.Fprintf(&b, "%s.%s = %v", s.entity, s.field, s.value)
		case stepMerge:
			fmt.Fprintf(&b, "%s into %s", s.from, s.to)
		case stepRelate:
			fmt.Fprintf(&b, "%s %s→%s %v", orderRelType, s.from, s.to, s.meta)
		case stepRetract, stepUndo:
			fmt.Fprintf(&b, "%v", p.refs(s.target, s.obsIndex))
			if s.obsIndex < 0 && p.steps[s.target].kind != stepCorrect {
				b.WriteString(" (by source)")
			}
		}
		if len(s.deps) > 0 {
			fmt.Fprintf(&b, "  after %v", s.deps)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// orderEntity is what TestIndependentStepsCommute compares of an entity,
// with entities named by identity and observations by the step that made
// them (see obsRef's label).
type orderEntity struct {
	MergedInto       string
	CanonicalName    string
	Snapshot         map[string]any
	Provenance       map[string]string
	ObservationCount int
	Observations     []string
}

// orderRelationship is what TestIndependentStepsCommute compares of a
// live relationship, with observations named by the relate step that made
// them (a merge's copy by the step that made what it copies).
type orderRelationship struct {
	Metadata         map[string]any
	Provenance       map[string]string
	ObservationCount int
	Observations     []string
}

// orderOutcome is the state a run of a program leaves: every entity by
// identity, every live relationship by its ends' identities, the entities
// each name the program gives finds (its identifiers), the timeline and
// the observations retracted.
type orderOutcome struct {
	Entities      map[string]orderEntity
	Relationships map[string]orderRelationship
	Found         map[string][]string
	Timeline      []string
	Retracted     []string
}

// runOrder runs program p's steps in order as user, on a service of its
// own over st with a clock that moves a second before each step, and reads
// what it left.
func runOrder(t *testing.T, st memoryStores, p orderProgram, order []int, user string) (orderOutcome, error) {
	ctx := t.Context()
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	svc := knowledge.NewService(st.graph, schema.NewRegistry(), knowledge.Options{
		Now: clk.Now, Contradictions: st.contradictions, GraphForget: st.control,
	})
	c := knowledge.Caller{UserID: user, AgentID: "claude"}
	ids := map[string]string{} // entity id → identity
	for _, name := range orderCompanies {
		ids[knowledge.EntityID(user, "company", name)] = name
	}
	entityID := func(name string) string { return knowledge.EntityID(user, "company", name) }
	var (
		obs     = map[obsRef]string{}
		labels  = map[string]string{} // observation id → label
		sources = map[int]string{}    // store or relate step → source id
		rels    = map[int]string{}    // relate step → the relationship it made or found
	)
	relSources := map[string]string{} // a relate step's source id → label
	for _, i := range order {
		s := p.steps[i]
		clk.Advance(time.Second)
		switch s.kind {
		case stepStore:
			res, err := svc.Store(ctx, c, s.req)
			if err != nil {
				return orderOutcome{}, fmt.Errorf("step %d: %w", i, err)
			}
			sources[s.repeats] = res.Source.ID
			for j, line := range res.Entities {
				ref := obsRef{s.repeats, j}
				obs[ref], labels[line.ObservationID] = line.ObservationID, fmt.Sprintf("store %d[%d]", ref.step, ref.i)
			}
		case stepCorrect:
			res, err := svc.Correct(ctx, c, knowledge.CorrectRequest{EntityID: entityID(s.entity), EntityType: "company", Field: s.field, Value: s.value})
			if err != nil {
				return orderOutcome{}, fmt.Errorf("step %d: %w", i, err)
			}
			if res.Unchanged {
				return orderOutcome{}, fmt.Errorf("step %d: the correction changed nothing, but no step repeats a correction's value", i)
			}
			obs[obsRef{i, 0}], labels[res.ObservationID] = res.ObservationID, fmt.Sprintf("correction %d", i)
		case stepMerge:
			if _, err := svc.MergeEntities(ctx, c, entityID(s.from), entityID(s.to), "duplicate"); err != nil {
				return orderOutcome{}, fmt.Errorf("step %d: %w", i, err)
			}
		case stepRelate:
			rel, _, err := svc.CreateRelationship(ctx, c, knowledge.RelationshipRequest{
				Type: orderRelType, SourceEntityID: entityID(s.from), TargetEntityID: entityID(s.to), Metadata: s.meta})
			if err != nil {
				return orderOutcome{}, fmt.Errorf("step %d: %w", i, err)
			}
			var robs []graph.RelationshipObservation
			if err := st.graph.View(ctx, func(tx *graph.Tx) error {
				robs, err = tx.RelationshipObservations(ctx, user, rel.ID)
				return err
			}); err != nil {
				return orderOutcome{}, err
			}
			k := slices.IndexFunc(robs, func(o graph.RelationshipObservation) bool { return o.ObservedAt.Equal(clk.Now()) })
			if k < 0 {
				return orderOutcome{}, fmt.Errorf("step %d: no observation of %s at %v: %v", i, rel.ID, clk.Now(), robs)
			}
			rels[i], sources[i] = rel.ID, robs[k].SourceID
			obs[obsRef{i, 0}], labels[robs[k].ID] = robs[k].ID, fmt.Sprintf("relate %d", i)
			relSources[robs[k].SourceID] = fmt.Sprintf("relate %d", i)
		case stepRetract, stepUndo:
			req := knowledge.RetractRequest{Reason: "wrong", Undo: s.kind == stepUndo}
			switch kind := p.steps[s.target].kind; {
			case kind != stepCorrect && s.obsIndex < 0:
				req.SourceID = sources[s.target]
			case kind == stepRelate:
				req.RelationshipID, req.RelationshipObservationIDs = rels[s.target], []string{obs[obsRef{s.target, 0}]}
			default:
				req.ObservationIDs = []string{obs[obsRef{s.target, s.obsIndex}]}
			}
			if _, err := svc.Retract(ctx, c, req); err != nil {
				return orderOutcome{}, fmt.Errorf("step %d: %w", i, err)
			}
		}
	}

	out := orderOutcome{Entities: map[string]orderEntity{}, Relationships: map[string]orderRelationship{},
		Found: map[string][]string{}, Timeline: []string{}, Retracted: []string{}}
	label := func(id string) string {
		if l, ok := labels[id]; ok {
			return l
		}
		return "unknown " + id
	}
	sourceLabels := map[string]string{} // source id → the step that made it
	ents, _, err := svc.ListEntities(ctx, c, knowledge.EntityQuery{IncludeMerged: true, Page: graph.Page{Limit: 100}})
	if err != nil {
		return orderOutcome{}, err
	}
	for _, e := range ents {
		name, ok := ids[e.ID]
		if !ok {
			return orderOutcome{}, fmt.Errorf("entity %s is none of the program's", e.ID)
		}
		var held []graph.Observation
		if err := st.graph.View(ctx, func(tx *graph.Tx) error {
			held, err = tx.AllObservations(ctx, user, e.ID)
			return err
		}); err != nil {
			return orderOutcome{}, err
		}
		oe := orderEntity{ObservationCount: e.ObservationCount, Observations: []string{}}
		for _, o := range held {
			l := label(o.ID)
			oe.Observations = append(oe.Observations, l)
			sourceLabels[o.SourceID], _, _ = strings.Cut(l, "[")
		}
		slices.Sort(oe.Observations)
		if e.Merged() {
			oe.MergedInto = ids[e.MergedInto]
		} else {
			oe.CanonicalName, oe.Snapshot, oe.Provenance = e.CanonicalName, e.Snapshot, map[string]string{}
			for f, id := range e.Provenance {
				oe.Provenance[f] = label(id)
			}
		}
		out.Entities[name] = oe
	}
	// The live relationships: a merge ended those of the entities it
	// merged away, which keep whatever they held by then.
	if err := st.graph.View(ctx, func(tx *graph.Tx) error {
		for _, name := range orderCompanies {
			rs, _, err := tx.ListRelationships(ctx, graph.RelationshipFilter{UserID: user, EntityID: entityID(name), Page: graph.Page{Limit: 100}})
			if err != nil {
				return err
			}
			for _, r := range rs {
				key := fmt.Sprintf("%s %s→%s", r.Type, ids[r.SourceEntityID], ids[r.TargetEntityID])
				if _, ok := out.Relationships[key]; ok || !r.Live(time.Time{}) {
					continue
				}
				robs, err := tx.RelationshipObservations(ctx, user, r.ID)
				if err != nil {
					return err
				}
				or := orderRelationship{Metadata: r.Metadata, Provenance: map[string]string{}, ObservationCount: r.ObservationCount, Observations: []string{}}
				sourceOf := map[string]string{}
				for _, o := range robs {
					sourceOf[o.ID] = o.SourceID
					l, ok := relSources[o.SourceID]
					if !ok {
						l = "unknown source " + o.SourceID
					}
					or.Observations = append(or.Observations, l)
				}
				slices.Sort(or.Observations)
				for f, id := range r.Provenance {
					or.Provenance[f] = relSources[sourceOf[id]]
				}
				out.Relationships[key] = or
			}
		}
		return nil
	}); err != nil {
		return orderOutcome{}, err
	}
	for _, name := range p.names() {
		found, err := svc.EntitiesByIdentifier(ctx, c, name, "company")
		if err != nil {
			return orderOutcome{}, err
		}
		out.Found[name] = []string{}
		for _, e := range found {
			out.Found[name] = append(out.Found[name], ids[e.ID])
		}
		slices.Sort(out.Found[name])
	}
	events, _, err := svc.Timeline(ctx, c, knowledge.TimelineQuery{Page: graph.Page{Limit: 100}})
	if err != nil {
		return orderOutcome{}, err
	}
	for _, e := range events {
		src, ok := sourceLabels[e.SourceID]
		if !ok {
			src = "unknown source " + e.SourceID
		}
		out.Timeline = append(out.Timeline, fmt.Sprintf("%s %s %s from %s", ids[e.EntityID], e.EventType, e.Timestamp, src))
	}
	slices.Sort(out.Timeline)
	rs, err := st.control.AllRetractions(ctx, user)
	if err != nil {
		return orderOutcome{}, err
	}
	for _, r := range rs {
		out.Retracted = append(out.Retracted, label(r.ObservationID))
	}
	slices.Sort(out.Retracted)
	return out, nil
}
