package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
)

// Prompts are what an agent's user picks from a host's menu (MCP
// prompts/list and prompts/get). Each fills its messages by calling
// Cairn's own tools for the caller, through Handle: consent, rate limits,
// budgets and the audit apply as to any other call, so a prompt shows
// nothing the agent may not read. A prompt is offered only when the tools
// it calls are enabled.

// promptSpec is one prompt: its definition, the tools it calls, and how it
// builds its messages from their answers.
type promptSpec struct {
	def   *mcpsdk.Prompt
	tools []string
	build func(ctx context.Context, s *Server, run toolRun, args map[string]string) ([]*mcpsdk.PromptMessage, error)
}

// toolRun calls a tool for the prompt's caller and decodes its answer into
// out.
type toolRun func(ctx context.Context, tool string, args map[string]any, out any) error

// Prompt names.
const (
	PromptLoadContext         = "load_context"
	PromptAboutEntity         = "about_entity"
	PromptReviewContradiction = "review_contradictions"
	PromptSummarisePeriod     = "summarise_period"
)

func promptSpecs() []promptSpec {
	return []promptSpec{
		{
			def: &mcpsdk.Prompt{
				Name: PromptLoadContext, Title: "Load what you know about me",
				Description: "What Cairn knows about the user (profile, the entities and memories that matter most), optionally about a topic, as the start of a conversation.",
				Arguments:   []*mcpsdk.PromptArgument{{Name: "topic", Title: "Topic", Description: "what the conversation is about (optional)"}},
			},
			tools: []string{"get_user_context"},
			build: func(ctx context.Context, s *Server, run toolRun, args map[string]string) ([]*mcpsdk.PromptMessage, error) {
				in := map[string]any{}
				intro := "Here is what Cairn knows about me."
				if topic := strings.TrimSpace(args["topic"]); topic != "" {
					in["topic"] = topic
					intro = fmt.Sprintf("Here is what Cairn knows about me, with what bears on %q first.", topic)
				}
				var out json.RawMessage
				if err := run(ctx, "get_user_context", in, &out); err != nil {
					return nil, err
				}
				return userMessages(intro+" Use it in this conversation; retrieve_field_provenance says where any fact came from.", out), nil
			},
		},
		{
			def: &mcpsdk.Prompt{
				Name: PromptAboutEntity, Title: "What do you know about…",
				Description: "Everything Cairn holds about one entity: its snapshot, relationships, the sources of its facts and its timeline.",
				Arguments:   []*mcpsdk.PromptArgument{{Name: "entity", Title: "Entity", Description: "a name, or an entity id (ent_…)", Required: true}},
			},
			tools: []string{"retrieve_entities", "retrieve_graph_neighborhood"},
			build: func(ctx context.Context, s *Server, run toolRun, args map[string]string) ([]*mcpsdk.PromptMessage, error) {
				name := strings.TrimSpace(args["entity"])
				if name == "" {
					return nil, invalidParams("the argument entity is required: a name or an entity id")
				}
				id := name
				if !strings.HasPrefix(name, "ent_") {
					var hits struct {
						Entities []struct {
							ID string `json:"id"`
						} `json:"entities"`
					}
					if err := run(ctx, "retrieve_entities", map[string]any{"query": name, "limit": 1, "include_snapshots": false}, &hits); err != nil {
						return nil, err
					}
					if len(hits.Entities) == 0 {
						return []*mcpsdk.PromptMessage{{Role: "user", Content: &mcpsdk.TextContent{
							Text: fmt.Sprintf("Cairn knows nothing about %q that you may read. Ask me about it, and store what I tell you.", name)}}}, nil
					}
					id = hits.Entities[0].ID
				}
				var out json.RawMessage
				err := run(ctx, "retrieve_graph_neighborhood", map[string]any{"node_id": id}, &out)
				if e := (*Error)(nil); errors.As(err, &e) && e.Body.Code == CodeConsentDenied && s.hasTools("retrieve_entity_snapshot") {
					// An agent that may read the entity but not the graph
					// gets its snapshot alone.
					if err := run(ctx, "retrieve_entity_snapshot", map[string]any{"entity_id": id}, &out); err != nil {
						return nil, err
					}
					return userMessages(fmt.Sprintf("Here is what Cairn knows about %s. Answer from it, and say which source a fact came from.", name), out), nil
				}
				if err != nil {
					return nil, err
				}
				return userMessages(fmt.Sprintf("Here is what Cairn knows about %s: the entity, its relationships, the sources of its facts and its timeline. Answer from it, and say which source a fact came from.", name), out), nil
			},
		},
		{
			def: &mcpsdk.Prompt{
				Name: PromptReviewContradiction, Title: "Review contradictions",
				Description: "The contradictions Cairn found between what it was told, to settle with the user one by one.",
			},
			tools: []string{"review_memories"},
			build: func(ctx context.Context, _ *Server, run toolRun, _ map[string]string) ([]*mcpsdk.PromptMessage, error) {
				var out json.RawMessage
				if err := run(ctx, "review_memories", map[string]any{"action": "list"}, &out); err != nil {
					return nil, err
				}
				return userMessages("Here are the contradictions Cairn found in what it knows about me. Go through them with me one at a time; "+
					"when I decide, settle each with review_memories (action resolve: confirm, reject or keep_both).", out), nil
			},
		},
		{
			def: &mcpsdk.Prompt{
				Name: PromptSummarisePeriod, Title: "Summarise a period",
				Description: "What happened in a year, a month or a day, from the timeline of the user's data.",
				Arguments:   []*mcpsdk.PromptArgument{{Name: "period", Title: "Period", Description: "YYYY, YYYY-MM or YYYY-MM-DD", Required: true}},
			},
			tools: []string{"list_timeline_events"},
			build: func(ctx context.Context, s *Server, run toolRun, args map[string]string) ([]*mcpsdk.PromptMessage, error) {
				period := strings.TrimSpace(args["period"])
				from, to, err := periodBounds(period)
				if err != nil {
					return nil, invalidParams(err.Error())
				}
				var out json.RawMessage
				in := map[string]any{"after_date": from.Format(time.RFC3339), "before_date": to.Format(time.RFC3339), "limit": 100}
				if err := run(ctx, "list_timeline_events", in, &out); err != nil {
					return nil, err
				}
				return userMessages(fmt.Sprintf("Here are the events of %s in Cairn's timeline, newest first. Summarise what happened, in order.", period), out), nil
			},
		},
	}
}

// userMessages is the one user message of a prompt: its words, then the
// tool's answer as JSON.
func userMessages(text string, data json.RawMessage) []*mcpsdk.PromptMessage {
	return []*mcpsdk.PromptMessage{{Role: "user", Content: &mcpsdk.TextContent{Text: text + "\n\n```json\n" + string(data) + "\n```"}}}
}

// periodLayouts are the forms of a period, longest first.
var periodLayouts = []struct {
	layout string
	next   func(time.Time) time.Time
}{
	{"2006-01-02", func(t time.Time) time.Time { return t.AddDate(0, 0, 1) }},
	{"2006-01", func(t time.Time) time.Time { return t.AddDate(0, 1, 0) }},
	{"2006", func(t time.Time) time.Time { return t.AddDate(1, 0, 0) }},
}

// periodBounds returns the start of period and the start of the period
// after it, in UTC.
func periodBounds(period string) (from, to time.Time, err error) {
	for _, l := range periodLayouts {
		if len(period) != len(l.layout) {
			continue
		}
		if t, err := time.Parse(l.layout, period); err == nil {
			return t, l.next(t), nil
		}
	}
	return time.Time{}, time.Time{}, fmt.Errorf("period %q is not a year (2026), a month (2026-03) or a day (2026-03-14)", truncateText(period, 32))
}

// addPrompts registers the prompts whose tools are enabled on srv.
func (s *Server) addPrompts(srv *mcpsdk.Server, who PrincipalFunc, transport string) {
	for _, p := range promptSpecs() {
		if !s.hasTools(p.tools...) {
			continue
		}
		srv.AddPrompt(p.def, func(ctx context.Context, req *mcpsdk.GetPromptRequest) (*mcpsdk.GetPromptResult, error) {
			run, err := s.runnerFor(ctx, who, req.Extra, transport)
			if err != nil {
				return nil, rpcError(err)
			}
			msgs, err := p.build(ctx, s, run, req.Params.Arguments)
			if err != nil {
				return nil, rpcError(err)
			}
			return &mcpsdk.GetPromptResult{Description: p.def.Description, Messages: msgs}, nil
		})
	}
}

// hasTools reports whether every tool named is enabled.
func (s *Server) hasTools(names ...string) bool {
	for _, n := range names {
		if _, ok := s.byName[n]; !ok {
			return false
		}
	}
	return true
}

// runnerFor returns a toolRun for the principal of a request.
func (s *Server) runnerFor(ctx context.Context, who PrincipalFunc, extra *mcpsdk.RequestExtra, transport string) (toolRun, error) {
	p, err := who(ctx, extra)
	if err != nil {
		return nil, toError(err)
	}
	return s.runnerOf(p, transport), nil
}

// runnerOf returns a toolRun for a principal.
func (s *Server) runnerOf(p consent.Principal, transport string) toolRun {
	return func(ctx context.Context, tool string, args map[string]any, out any) error {
		raw, err := json.Marshal(args)
		if err != nil {
			return err
		}
		r := s.Handle(ctx, Request{Principal: p, Tool: tool, Args: raw, Transport: transport})
		if r.Err != nil {
			return r.Err
		}
		return json.Unmarshal(r.Output, out)
	}
}

// rpcError is how an error answers a prompts, resources or completion
// request, which has no tool result to carry Cairn's envelope: a tool's
// error whose cause is the request (validation, not found) is JSON-RPC's
// invalid params, any other its internal error, each with the envelope's
// code and message, and the envelope as data. Other errors pass through.
func rpcError(err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	code := int64(jsonrpc.CodeInternalError)
	if e.Status == http.StatusBadRequest || e.Status == http.StatusNotFound {
		code = jsonrpc.CodeInvalidParams
	}
	data, _ := json.Marshal(e.Envelope())
	return &jsonrpc.Error{Code: code, Message: e.Error(), Data: data}
}

// invalidParams is JSON-RPC's invalid params, for a prompt argument that
// is missing or malformed.
func invalidParams(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}

// maxCompletions is how many values a completion offers.
const maxCompletions = 10

// completions answers completion/complete for the prompts' arguments and
// the resource templates' variables: entity names and ids (from
// retrieve_entities, so consent-filtered and ranked by the search), entity
// types (those the caller may read that hold entities) and periods (the
// years and months of the timeline events the caller may read). Other
// arguments and references have no values.
func (s *Server) completions(who PrincipalFunc, transport string) func(context.Context, *mcpsdk.CompleteRequest) (*mcpsdk.CompleteResult, error) {
	return func(ctx context.Context, req *mcpsdk.CompleteRequest) (*mcpsdk.CompleteResult, error) {
		empty := &mcpsdk.CompleteResult{Completion: mcpsdk.CompletionResultDetails{Values: []string{}}}
		if req.Params == nil || req.Params.Ref == nil || (req.Params.Ref.Type != "ref/prompt" && req.Params.Ref.Type != "ref/resource") {
			return empty, nil
		}
		run, err := s.runnerFor(ctx, who, req.Extra, transport)
		if err != nil {
			return nil, rpcError(err)
		}
		prefix := req.Params.Argument.Value
		var values []string
		var cut bool // the answer a list was cut to fit its budget
		ref, arg := req.Params.Ref, req.Params.Argument.Name
		// A resource template's variables: its URI as listed (with or
		// without the list's {?offset}), in either scheme.
		tmpl, _ := canonicalURI(strings.TrimSuffix(ref.URI, "{?offset}"))
		switch {
		case ref.Type == "ref/prompt" && ref.Name == PromptAboutEntity && arg == "entity" && s.hasTools("retrieve_entities"):
			values, cut, err = completeEntities(ctx, run, prefix)
		case ref.Type == "ref/prompt" && ref.Name == PromptSummarisePeriod && arg == "period" && s.hasTools("list_timeline_events"):
			values, err = completePeriods(ctx, run, prefix)
		case ref.Type == "ref/resource" && tmpl == resourceScheme+"timeline/{period}" && arg == "period" && s.hasTools("list_timeline_events"):
			values, err = completePeriods(ctx, run, prefix)
		case ref.Type == "ref/resource" && tmpl == resourceScheme+"entities/{entity_type}" && arg == "entity_type" && s.hasTools("get_user_context"):
			values, err = completeTypes(ctx, run, prefix)
		case ref.Type == "ref/resource" && strings.HasPrefix(tmpl, resourceScheme+"entity/{entity_id}") && arg == "entity_id" && s.hasTools("retrieve_entities"):
			values, cut, err = completeEntityIDs(ctx, run, prefix)
		}
		if err != nil {
			return nil, rpcError(err)
		}
		if len(values) == 0 {
			return empty, nil
		}
		more := len(values) > maxCompletions || cut
		values = values[:min(len(values), maxCompletions)]
		return &mcpsdk.CompleteResult{Completion: mcpsdk.CompletionResultDetails{Values: values, HasMore: more}}, nil
	}
}

// completionKey marks the context of a retrieve_entities call that a
// completion makes: its query is a value being typed
// (knowledge.EntitySearchQuery.Complete), which the call ranks as such.
// The call is otherwise the one an agent makes, through the same consent,
// limits and audit.
type completionKey struct{}

// completing reports whether ctx is that of a completion's call.
func completing(ctx context.Context) bool { return ctx.Value(completionKey{}) != nil }

// completeEntities offers the names of the entities whose name, or a later
// word of it, begins with prefix (then of those a word search for it
// finds), best first, each once; cut says that more matched.
func completeEntities(ctx context.Context, run toolRun, prefix string) (out []string, cut bool, err error) {
	hits, cut, err := completedEntities(ctx, run, prefix)
	for _, h := range hits {
		if h.CanonicalName != "" && !slices.Contains(out, h.CanonicalName) {
			out = append(out, h.CanonicalName)
		}
	}
	return out, cut, err
}

// completeTypes offers the entity types the caller may read that hold
// entities and start with prefix, those with the most entities first.
func completeTypes(ctx context.Context, run toolRun, prefix string) ([]string, error) {
	types, err := readableTypeCounts(ctx, run)
	var out []string
	for _, tc := range types {
		if strings.HasPrefix(tc.EntityType, strings.ToLower(prefix)) {
			out = append(out, tc.EntityType)
		}
	}
	return out, err
}

// completeEntityIDs offers the ids of the entities completeEntities finds
// by name, or of those whose id begins with prefix when it begins as ids
// do, best first.
func completeEntityIDs(ctx context.Context, run toolRun, prefix string) (out []string, cut bool, err error) {
	hits, cut, err := completedEntities(ctx, run, prefix)
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out, cut, err
}

// completedEntity is an entity a completion found.
type completedEntity struct {
	ID            string `json:"id"`
	CanonicalName string `json:"canonical_name"`
}

// completedEntities runs the completion's retrieve_entities call for
// prefix (marked as a completion's: completionKey): the entities it found,
// best first, and whether more matched. The entities come as
// retrieve_entities lists them, cut to its response budget (eight or so
// without snapshots).
func completedEntities(ctx context.Context, run toolRun, prefix string) ([]completedEntity, bool, error) {
	if strings.TrimSpace(prefix) == "" {
		return nil, false, nil
	}
	var hits struct {
		Entities []completedEntity `json:"entities"`
		Meta     struct {
			NextCursor string `json:"next_cursor"`
		} `json:"meta"`
	}
	in := map[string]any{"query": prefix, "limit": maxCompletions + 1, "include_snapshots": false, "meaning": false}
	if err := run(context.WithValue(ctx, completionKey{}, true), "retrieve_entities", in, &hits); err != nil {
		return nil, false, err
	}
	return hits.Entities, hits.Meta.NextCursor != "", nil
}

// periodsKey marks the context of a list_timeline_events call that a
// period completion or a resource listing makes: the call answers the
// years of the caller's timeline and the months of the year the key holds
// (0: none), without events (knowledge.TimelineQuery.PeriodsOnly), through
// the same consent, limits and audit as an agent's call.
type periodsKey struct{}

// periodsOnly reports whether ctx is that of such a call, and the year
// whose months it asks for.
func periodsOnly(ctx context.Context) (year int, ok bool) {
	year, ok = ctx.Value(periodsKey{}).(int)
	return year, ok
}

// completePeriods offers the periods that start with prefix: every year
// (UTC) with events the caller may read, newest first, then, once prefix
// names a year, that year's months with events, newest first. Each is an
// index seek a period on every backend, so old years are offered as
// readily as this one.
func completePeriods(ctx context.Context, run toolRun, prefix string) ([]string, error) {
	year := 0
	if len(prefix) >= 4 {
		if y, err := strconv.Atoi(prefix[:4]); err == nil && y > 0 {
			year = y
		}
	}
	var page struct {
		Years  []string `json:"years"`
		Months []string `json:"months"`
	}
	if err := run(context.WithValue(ctx, periodsKey{}, year), "list_timeline_events", map[string]any{}, &page); err != nil {
		return nil, err
	}
	var out []string
	for _, p := range append(page.Years, page.Months...) {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	return out, nil
}
