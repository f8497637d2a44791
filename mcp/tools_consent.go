package mcp

import (
	"context"
	"net/http"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cairnkg/cairn/consent"
)

// ConsentStore is what the consent toolset needs from the control plane.
type ConsentStore interface {
	ListRules(ctx context.Context, userID, agentID string) ([]consent.Rule, error)
	SetRule(ctx context.Context, r consent.Rule) (consent.Rule, error)
	DeleteRule(ctx context.Context, userID, ruleID string) error
	AgentByName(ctx context.Context, userID, name string) (consent.Agent, error)
	QueryAudit(ctx context.Context, q consent.AuditQuery) ([]consent.AuditRecord, error)
}

// consentTools are the owner-only tools of the consent toolset, listed
// after every other tool.
func consentTools(d Deps) []*Tool {
	return []*Tool{listConsentRulesTool(d), setConsentRuleTool(d), deleteConsentRuleTool(d), queryAuditLogTool(d)}
}

func consentStore(d Deps) (ConsentStore, error) {
	if d.Consent == nil {
		return nil, newError(http.StatusServiceUnavailable, CodeServiceUnavailable, "consent management is not configured on this server", nil)
	}
	return d.Consent, nil
}

// RuleOut is a consent rule.
type RuleOut struct {
	ID       string `json:"id"`
	Agent    string `json:"agent"`
	Resource string `json:"resource" jsonschema:"the pattern, in canonical form (tables/ is shown as entities/, vectors/ as memories/)"`
	Action   string `json:"action" jsonschema:"read, write or delete"`
	Effect   string `json:"effect" jsonschema:"allow or deny"`
}

func ruleOut(r consent.Rule) RuleOut {
	return RuleOut{ID: r.ID, Agent: r.AgentName, Resource: r.Pattern, Action: string(r.Action), Effect: string(r.Effect)}
}

// ListRulesIn are the arguments of list_consent_rules.
type ListRulesIn struct {
	Agent *string `json:"agent,omitempty"`
}

// ListRulesOut lists rules.
type ListRulesOut struct {
	Rules []RuleOut `json:"rules"`
	Total int       `json:"total"`
}

func listConsentRulesTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:        "list_consent_rules",
		title:       "List consent rules",
		description: "List your agents' consent rules: the most specific wins, deny wins ties, no rule means deny. Owner agent only.",
		toolset:     ToolsetConsent, ann: readOnly, budget: BudgetList, ownerOnly: true,
		shape: func(s *jsonschema.Schema) { maxLen(prop(s, "agent"), 64) },
	}, func(ctx context.Context, call *Call, in ListRulesIn) (ListRulesOut, error) {
		cs, err := consentStore(d)
		if err != nil {
			return ListRulesOut{}, err
		}
		agentID := ""
		if in.Agent != nil && *in.Agent != "" {
			a, err := cs.AgentByName(ctx, call.Principal.UserID, *in.Agent)
			if err != nil {
				return ListRulesOut{}, err
			}
			agentID = a.ID
		}
		rules, err := cs.ListRules(ctx, call.Principal.UserID, agentID)
		if err != nil {
			return ListRulesOut{}, err
		}
		out := ListRulesOut{Rules: mapSlice(rules, ruleOut), Total: len(rules)}
		return out, nil
	})
}

// SetRuleIn are the arguments of set_consent_rule.
type SetRuleIn struct {
	Agent    string `json:"agent"`
	Resource string `json:"resource" jsonschema:"*, profile, graph, schema, sources, audit, entities/<type>, memories/<collection>; may end in *"`
	Action   string `json:"action"`
	Effect   string `json:"effect"`
}

// SetRuleOut is the rule as stored.
type SetRuleOut struct {
	Rule RuleOut `json:"rule"`
}

func setConsentRuleTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "set_consent_rule",
		title: "Set a consent rule",
		description: "Allow or deny one of your agents an action on resources, replacing its rule for the same resource " +
			"and action. Owner agent only.",
		toolset: ToolsetConsent, ann: additive, budget: BudgetList, ownerOnly: true,
		shape: func(s *jsonschema.Schema) {
			maxLen(prop(s, "agent"), 64)
			maxLen(prop(s, "resource"), 200)
			enum(prop(s, "action"), "read", "write", "delete")
			enum(prop(s, "effect"), "allow", "deny")
		},
	}, func(ctx context.Context, call *Call, in SetRuleIn) (SetRuleOut, error) {
		cs, err := consentStore(d)
		if err != nil {
			return SetRuleOut{}, err
		}
		a, err := cs.AgentByName(ctx, call.Principal.UserID, in.Agent)
		if err != nil {
			return SetRuleOut{}, err
		}
		r, err := cs.SetRule(ctx, consent.Rule{UserID: call.Principal.UserID, AgentID: a.ID,
			Pattern: in.Resource, Action: consent.Action(in.Action), Effect: consent.Effect(in.Effect)})
		if err != nil {
			return SetRuleOut{}, err
		}
		r.AgentName = a.Name
		return SetRuleOut{Rule: ruleOut(r)}, nil
	})
}

// DeleteRuleIn are the arguments of delete_consent_rule.
type DeleteRuleIn struct {
	RuleID string `json:"rule_id" jsonschema:"from list_consent_rules"`
}

// DeleteRuleOut confirms a deletion.
type DeleteRuleOut struct {
	RuleID  string `json:"rule_id"`
	Deleted bool   `json:"deleted"`
}

func deleteConsentRuleTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:        "delete_consent_rule",
		title:       "Delete a consent rule",
		description: "Delete one consent rule by id; what it allowed is denied again unless another rule allows it. Owner agent only.",
		toolset:     ToolsetConsent, ann: destroys, budget: BudgetList, ownerOnly: true,
		shape: func(s *jsonschema.Schema) { maxLen(prop(s, "rule_id"), idLimit) },
	}, func(ctx context.Context, call *Call, in DeleteRuleIn) (DeleteRuleOut, error) {
		cs, err := consentStore(d)
		if err != nil {
			return DeleteRuleOut{}, err
		}
		if err := cs.DeleteRule(ctx, call.Principal.UserID, in.RuleID); err != nil {
			return DeleteRuleOut{}, err
		}
		return DeleteRuleOut{RuleID: in.RuleID, Deleted: true}, nil
	})
}

// AuditQueryIn are the arguments of query_audit_log.
type AuditQueryIn struct {
	Agent    *string `json:"agent,omitempty"`
	Tool     *string `json:"tool,omitempty"`
	Kind     *string `json:"kind,omitempty" jsonschema:"call: a row per tool call; consent: a row per consent decision"`
	Decision *string `json:"decision,omitempty"`
	Since    *string `json:"since,omitempty" jsonschema:"ISO 8601, inclusive"`
	Until    *string `json:"until,omitempty" jsonschema:"ISO 8601, exclusive"`
	BeforeID *int64  `json:"before_id,omitempty" jsonschema:"only older records (to page back)"`
	Limit    *int    `json:"limit,omitempty"`
}

// AuditRecordOut is one audit record. It never holds stored values.
type AuditRecordOut struct {
	ID         int64  `json:"id"`
	At         string `json:"at"`
	Agent      string `json:"agent"`
	KeyID      string `json:"key_id,omitempty"`
	Transport  string `json:"transport"`
	Tool       string `json:"tool"`
	Kind       string `json:"kind"`
	Action     string `json:"action,omitempty"`
	Resource   string `json:"resource,omitempty"`
	Decision   string `json:"decision"`
	ResultCode string `json:"result_code"`
	LatencyMS  int64  `json:"latency_ms"`
	RequestID  string `json:"request_id"`
	// Count is how many decisions a consent record stands for.
	Count int `json:"count,omitempty" jsonschema:"of a consent record: how many resources of its kind the call was allowed (resource then ends in /*); 1 for a denial, which always has its own record"`
}

// AuditQueryOut lists audit records, newest first.
type AuditQueryOut struct {
	Records []AuditRecordOut `json:"records"`
	Total   int              `json:"total" jsonschema:"records returned"`
}

func queryAuditLogTool(d Deps) *Tool {
	return newTool(toolSpec{
		name:  "query_audit_log",
		title: "Query the audit log",
		description: "Read the audit log, newest first: every tool call and consent decision (agent, tool, resource, decision, " +
			"result code, latency, request id); never stored values. Owner agent only.",
		toolset: ToolsetConsent, ann: readOnly, budget: BudgetSummary, ownerOnly: true,
		requires: reads(consent.ResourceAudit),
		shape: func(s *jsonschema.Schema) {
			maxLen(prop(s, "agent"), 64)
			maxLen(prop(s, "tool"), 64)
			enum(prop(s, "kind"), consent.AuditCall, consent.AuditDecision)
			enum(prop(s, "decision"), "allow", "deny")
			maxLen(prop(s, "since"), 64)
			maxLen(prop(s, "until"), 64)
			bounds(prop(s, "before_id"), 1, 1<<62)
			bounds(prop(s, "limit"), 1, maxLimit)
			setDefault(prop(s, "limit"), 50)
		},
	}, func(ctx context.Context, call *Call, in AuditQueryIn) (AuditQueryOut, error) {
		cs, err := consentStore(d)
		if err != nil {
			return AuditQueryOut{}, err
		}
		q := consent.AuditQuery{UserID: call.Principal.UserID, AgentName: deref(in.Agent), Tool: deref(in.Tool), Kind: deref(in.Kind),
			Decision: consent.Effect(deref(in.Decision)), BeforeID: deref(in.BeforeID), Limit: 50}
		if in.Limit != nil {
			q.Limit = *in.Limit
		}
		if q.Since, err = optionalTime("since", in.Since); err != nil {
			return AuditQueryOut{}, err
		}
		if q.Until, err = optionalTime("until", in.Until); err != nil {
			return AuditQueryOut{}, err
		}
		recs, err := cs.QueryAudit(ctx, q)
		if err != nil {
			return AuditQueryOut{}, err
		}
		out := AuditQueryOut{Records: make([]AuditRecordOut, len(recs)), Total: len(recs)}
		for i, r := range recs {
			out.Records[i] = AuditRecordOut{ID: r.ID, At: ts(r.At), Agent: r.AgentName, KeyID: r.KeyID, Transport: r.Transport,
				Tool: r.Tool, Kind: r.Kind, Action: string(r.Action), Resource: r.Resource, Decision: string(r.Decision), Count: decisionCount(r),
				ResultCode: r.ResultCode, LatencyMS: r.Latency.Milliseconds(), RequestID: r.RequestID}
		}
		return out, nil
	})
}

// decisionCount is the count a consent record shows: none for a call.
func decisionCount(r consent.AuditRecord) int {
	if r.Kind != consent.AuditDecision {
		return 0
	}
	return max(r.Count, 1)
}
