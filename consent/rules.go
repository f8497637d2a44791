package consent

import (
	"errors"
	"fmt"
	"strings"
)

// Action is what a rule allows or denies: reading, writing or deleting a
// resource.
type Action string

// The actions a rule can name. Delete is its own action rather than a kind
// of write: an agent that may save memories may not, by that alone, make
// them forgotten (retract or erase them).
const (
	Read   Action = "read"
	Write  Action = "write"
	Delete Action = "delete"
)

// Effect is what a rule decides.
type Effect string

// The effects of a rule.
const (
	Allow Effect = "allow"
	Deny  Effect = "deny"
)

// Resource kinds. A resource is one of the singletons (profile, graph,
// schema, sources, audit) or a kind followed by a name: entities/<type>,
// memories/<collection>.
const (
	ResourceProfile = "profile"
	ResourceGraph   = "graph"
	ResourceSchema  = "schema"
	ResourceSources = "sources"
	ResourceAudit   = "audit"
	KindEntities    = "entities"
	KindMemories    = "memories"
)

// singletons are the resources that have no name part.
var singletons = []string{ResourceProfile, ResourceGraph, ResourceSchema, ResourceSources, ResourceAudit}

// aliases map Epitome's names onto Cairn's: tables are entity types,
// vector collections are memory collections.
var aliases = map[string]string{"tables": KindEntities, "vectors": KindMemories}

// ErrInvalidRule means a rule's agent, pattern, action or effect is not one
// Cairn understands; the message says what is expected.
var ErrInvalidRule = errors.New("invalid consent rule")

// Rule allows or denies one agent an action on the resources a pattern
// matches.
type Rule struct {
	ID      string
	UserID  string
	AgentID string
	// AgentName is filled in by listings; rules are stored by agent id.
	AgentName string
	Pattern   string
	Action    Action
	Effect    Effect
}

// ParseAction checks an action name.
func ParseAction(s string) (Action, error) {
	switch a := Action(strings.ToLower(strings.TrimSpace(s))); a {
	case Read, Write, Delete:
		return a, nil
	}
	return "", fmt.Errorf("%w: action %q must be read, write or delete", ErrInvalidRule, s)
}

// ParseEffect checks an effect name.
func ParseEffect(s string) (Effect, error) {
	switch e := Effect(strings.ToLower(strings.TrimSpace(s))); e {
	case Allow, Deny:
		return e, nil
	}
	return "", fmt.Errorf("%w: effect %q must be allow or deny", ErrInvalidRule, s)
}

// maxPatternLen bounds a pattern in its canonical form; entity types and
// collections are short names.
const maxPatternLen = 200

// NormalizePattern checks a resource pattern and returns its canonical form,
// with the aliases tables/… → entities/… and vectors/… → memories/…
// resolved. A pattern is one of:
//
//   - every resource
//     profile, graph, schema, sources, audit
//     entities/*, memories/*  every type, every collection
//     entities/<prefix>*      the types whose name starts with prefix
//     entities/<type>, memories/<collection>
//
// A wildcard may only end a pattern.
func NormalizePattern(p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "", fmt.Errorf("%w: the resource pattern is empty", ErrInvalidRule)
	}
	// The canonical form is never shorter than the input (an alias is
	// shorter than the kind it stands for), so a long input is refused
	// before any work; the canonical form is measured again below.
	if len(p) > maxPatternLen {
		return "", fmt.Errorf("%w: the resource pattern is %d bytes; at most %d", ErrInvalidRule, len(p), maxPatternLen)
	}
	if p == "*" {
		return p, nil
	}
	for _, s := range singletons {
		if p == s {
			return p, nil
		}
	}
	given, name, ok := strings.Cut(p, "/")
	kind := given
	if real, isAlias := aliases[given]; isAlias {
		kind = real
	}
	if !ok || (kind != KindEntities && kind != KindMemories) {
		return "", fmt.Errorf("%w: resource %q must be *, profile, graph, schema, sources, audit, entities/<type> (or tables/<type>) or memories/<collection> (or vectors/<collection>)", ErrInvalidRule, p)
	}
	lit := strings.TrimSuffix(name, "*")
	if name == "" || strings.ContainsAny(lit, "*/") {
		return "", fmt.Errorf("%w: resource %q: after %s/ give a name, a name prefix ending in *, or *", ErrInvalidRule, p, kind)
	}
	for _, r := range lit {
		if r <= ' ' || r == 0x7f {
			return "", fmt.Errorf("%w: resource %q contains a control or space character", ErrInvalidRule, p)
		}
	}
	// Measured again once the alias is resolved: "tables/<name>" is two
	// bytes shorter than the "entities/<name>" it becomes, and a pattern
	// accepted here must be accepted again as it is stored.
	canonical := kind + "/" + name
	if len(canonical) > maxPatternLen {
		return "", fmt.Errorf("%w: the resource pattern is %d bytes once %s/ reads %s/; at most %d", ErrInvalidRule, len(canonical), given, kind, maxPatternLen)
	}
	return canonical, nil
}

// NormalizeResource resolves the aliases of a concrete resource name (no
// wildcard); names Cairn does not know are returned unchanged, and match
// only the * pattern.
func NormalizeResource(r string) string {
	if kind, name, ok := strings.Cut(r, "/"); ok {
		if real, isAlias := aliases[kind]; isAlias {
			return real + "/" + name
		}
	}
	return r
}

// specificity ranks how closely a canonical pattern matches a resource: -1
// when it does not match; otherwise exact matches rank above every
// wildcard, and among wildcards the longer literal prefix ranks higher (so
// entities/invoice > entities/inv* > entities/* > *).
func specificity(pattern, resource string) int {
	if pattern == resource {
		return exactSpecificity
	}
	prefix, wild := strings.CutSuffix(pattern, "*")
	if !wild || !strings.HasPrefix(resource, prefix) {
		return -1
	}
	if prefix != "" && !strings.Contains(prefix, "/") {
		// A wildcard only ranges over the name part: "entities/*" matches
		// entities/x, but nothing like "ent*" exists (NormalizePattern
		// refuses it).
		return -1
	}
	return len(prefix)
}

// exactSpecificity is above any prefix length NormalizePattern allows.
const exactSpecificity = 1 << 20

// Decide applies rules (all of one agent) to an action on a resource: the
// most specific matching rule wins, at equal specificity deny wins, and no
// matching rule means deny. Rules with other actions are ignored. Patterns
// must be canonical (NormalizePattern); the resource may use aliases.
func Decide(rules []Rule, action Action, resource string) Effect {
	resource = NormalizeResource(resource)
	best, effect := -1, Deny
	for _, r := range rules {
		if r.Action != action {
			continue
		}
		s := specificity(r.Pattern, resource)
		switch {
		case s < 0:
		case s > best:
			best, effect = s, r.Effect
		case s == best && r.Effect == Deny:
			effect = Deny
		}
	}
	return effect
}
