package controlplane

import (
	"context"
	"fmt"

	"github.com/cairnkg/cairn/consent"
)

// SetRule records that an agent of a user is allowed or denied an action on
// a pattern. A rule for the same agent, pattern and action is replaced, so
// `allow` after `deny` changes the decision instead of stacking rules.
func (s *Store) SetRule(ctx context.Context, r consent.Rule) (consent.Rule, error) {
	pattern, err := consent.NormalizePattern(r.Pattern)
	if err != nil {
		return r, err
	}
	if r.Action, err = consent.ParseAction(string(r.Action)); err != nil {
		return r, err
	}
	if r.Effect, err = consent.ParseEffect(string(r.Effect)); err != nil {
		return r, err
	}
	r.Pattern, r.ID = pattern, newID("rule_")
	err = s.db.QueryRowContext(ctx, `INSERT INTO consent_rules (id, user_id, agent_id, pattern, action, effect, created_at)
		SELECT $1, a.user_id, a.id, $4, $5, $6, $7 FROM agents a WHERE a.id = $3 AND a.user_id = $2
		ON CONFLICT (user_id, agent_id, pattern, action) DO UPDATE SET effect = EXCLUDED.effect
		RETURNING id`, r.ID, r.UserID, r.AgentID, r.Pattern, string(r.Action), string(r.Effect), micros(s.now())).Scan(&r.ID)
	if err != nil {
		if isNoRows(err) {
			return r, fmt.Errorf("controlplane: agent %s of user %s: %w", r.AgentID, r.UserID, ErrNotFound)
		}
		return r, wrap("set rule", err)
	}
	return r, nil
}

// RulesFor implements consent.RuleStore.
func (s *Store) RulesFor(ctx context.Context, userID, agentID string) ([]consent.Rule, error) {
	return s.listRules(ctx, userID, agentID)
}

// ListRules returns a user's rules, of one agent (agentID not empty) or of
// all, by agent name then pattern.
func (s *Store) ListRules(ctx context.Context, userID, agentID string) ([]consent.Rule, error) {
	return s.listRules(ctx, userID, agentID)
}

func (s *Store) listRules(ctx context.Context, userID, agentID string) ([]consent.Rule, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT r.id, r.user_id, r.agent_id, a.name, r.pattern, r.action, r.effect
		FROM consent_rules r JOIN agents a ON a.id = r.agent_id
		WHERE r.user_id = $1 AND ($2 = '' OR r.agent_id = $2) ORDER BY a.name, r.pattern, r.action`, userID, agentID)
	if err != nil {
		return nil, wrap("list rules", err)
	}
	defer rows.Close()
	var out []consent.Rule
	for rows.Next() {
		var r consent.Rule
		var action, effect string
		if err := rows.Scan(&r.ID, &r.UserID, &r.AgentID, &r.AgentName, &r.Pattern, &action, &effect); err != nil {
			return nil, wrap("list rules", err)
		}
		r.Action, r.Effect = consent.Action(action), consent.Effect(effect)
		out = append(out, r)
	}
	return out, wrap("list rules", rows.Err())
}

// DeleteRule removes one of a user's rules.
func (s *Store) DeleteRule(ctx context.Context, userID, ruleID string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM consent_rules WHERE id = $1 AND user_id = $2`, ruleID, userID)
	if err != nil {
		return wrap("delete rule", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("controlplane: rule %s: %w", ruleID, ErrNotFound)
	}
	return nil
}
