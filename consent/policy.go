package consent

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// RuleStore is what the policy needs from the control plane.
type RuleStore interface {
	// RulesFor returns the rules of one agent of one user, with canonical
	// patterns.
	RulesFor(ctx context.Context, userID, agentID string) ([]Rule, error)
}

// Policy decides what principals may do, from the rules in a RuleStore.
// The owner user's owner agent may do everything whatever the rules say, so
// that the owner cannot lock themselves out.
type Policy struct {
	store RuleStore
}

// NewPolicy returns a policy over a rule store.
func NewPolicy(store RuleStore) *Policy { return &Policy{store: store} }

// Decider answers consent questions for one call. It reads the agent's rules
// once, when the call starts, so that a call sees one consistent set of
// rules, and it remembers every distinct decision it made, for the audit
// log. It is safe for concurrent use.
type Decider struct {
	owner bool
	rules []Rule

	mu        sync.Mutex
	decisions []Decision
}

// Decision is one consent question and its answer.
type Decision struct {
	Action   Action
	Resource string
	Effect   Effect
}

// For returns the decider of one call by p.
func (pol *Policy) For(ctx context.Context, p Principal) (*Decider, error) {
	if p.Owner {
		return &Decider{owner: true}, nil
	}
	rules, err := pol.store.RulesFor(ctx, p.UserID, p.AgentID)
	if err != nil {
		return nil, fmt.Errorf("consent: read rules: %w", err)
	}
	return &Decider{rules: rules}, nil
}

// NewDecider returns a decider over given rules; owner true allows
// everything. Tests and benchmarks use it to decide without a store.
func NewDecider(owner bool, rules []Rule) *Decider { return &Decider{owner: owner, rules: rules} }

// Decide answers whether the call may act on a resource, and records the
// decision.
func (d *Decider) Decide(action Action, resource string) Effect {
	effect := Allow
	if !d.owner {
		effect = Decide(d.rules, action, resource)
	}
	resource = NormalizeResource(resource)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !slices.ContainsFunc(d.decisions, func(x Decision) bool { return x.Action == action && x.Resource == resource }) {
		d.decisions = append(d.decisions, Decision{Action: action, Resource: resource, Effect: effect})
	}
	return effect
}

// Allowed is Decide as a boolean, in the shape knowledge.Caller.Allowed
// takes once its action type is converted.
func (d *Decider) Allowed(action Action, resource string) bool {
	return d.Decide(action, resource) == Allow
}

// Decisions returns the distinct decisions made so far, in the order they
// were first made.
func (d *Decider) Decisions() []Decision {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.decisions)
}
