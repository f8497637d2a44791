package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resources (Neotoma v1 §2.8) are read-only views a host can browse:
// entity collections by type, one entity, its observations and
// relationships, the timeline of a year or a month, and one source. Their
// URIs are cairn://…; neotoma://… is accepted as an alias. Like prompts,
// every read calls Cairn's own tools for the caller through Handle, so
// consent, budgets and the audit apply: what an agent may not read is not
// listed and reads as not found. resources/list lists, per caller, the
// collections of the entity types it may read that hold entities, and the
// timeline years of the newest events it may read; the parameterised forms
// are resource templates.

const (
	resourceScheme      = "cairn://"
	resourceSchemeAlias = "neotoma://"
	// resourcePageSize is how many entities, observations, relationships
	// or events one read returns.
	resourcePageSize = 100
)

// resourceSpec is one resource template and how to read it.
type resourceSpec struct {
	tmpl  *mcpsdk.ResourceTemplate
	tools []string
	// read answers the resource at uri, whose part after the scheme is
	// path; ok false means the URI is not of this template.
	read func(ctx context.Context, run toolRun, uri, path string) (any, bool, error)
}

func resourceSpecs() []resourceSpec {
	jsonTemplate := func(uri, name, title, desc string) *mcpsdk.ResourceTemplate {
		return &mcpsdk.ResourceTemplate{URITemplate: uri, Name: name, Title: title, Description: desc, MIMEType: "application/json"}
	}
	return []resourceSpec{
		{
			tmpl:  jsonTemplate(resourceScheme+"entities/{entity_type}", "entity_collection", "Entities of a type", "The entities of one type, newest first (100 at most)."),
			tools: []string{"retrieve_entities"},
			read: func(ctx context.Context, run toolRun, uri, path string) (any, bool, error) {
				typ, ok := strings.CutPrefix(path, "entities/")
				if !ok || typ == "" || strings.Contains(typ, "/") {
					return nil, false, nil
				}
				var page struct {
					Entities json.RawMessage `json:"entities"`
					Total    int             `json:"total"`
				}
				err := run(ctx, "retrieve_entities", map[string]any{"entity_type": typ, "limit": resourcePageSize}, &page)
				if err != nil {
					return nil, true, err
				}
				if page.Total == 0 {
					return nil, true, mcpsdk.ResourceNotFoundError(uri)
				}
				return map[string]any{"type": "entity_collection", "entity_type": typ, "entities": page.Entities, "total": page.Total, "uri": uri}, true, nil
			},
		},
		{
			tmpl:  jsonTemplate(resourceScheme+"entity/{entity_id}", "entity", "An entity", "One entity: its snapshot with the provenance of each field."),
			tools: []string{"retrieve_entity_snapshot"},
			read: func(ctx context.Context, run toolRun, uri, path string) (any, bool, error) {
				id, ok := strings.CutPrefix(path, "entity/")
				if !ok || id == "" || strings.Contains(id, "/") {
					return nil, false, nil
				}
				var out map[string]any
				if err := run(ctx, "retrieve_entity_snapshot", map[string]any{"entity_id": id}, &out); err != nil {
					return nil, true, err
				}
				out["type"], out["uri"] = "entity", uri
				return out, true, nil
			},
		},
		{
			tmpl:  jsonTemplate(resourceScheme+"entity/{entity_id}/observations", "entity_observations", "An entity's observations", "What each source said about one entity, newest first (100 at most)."),
			tools: []string{"list_observations"},
			read:  entityPart("observations", "list_observations", "entity_observations"),
		},
		{
			tmpl:  jsonTemplate(resourceScheme+"entity/{entity_id}/relationships", "entity_relationships", "An entity's relationships", "The live relationships of one entity, both directions (100 at most)."),
			tools: []string{"list_relationships"},
			read:  entityPart("relationships", "list_relationships", "entity_relationships"),
		},
		{
			tmpl:  jsonTemplate(resourceScheme+"timeline/{period}", "timeline", "Timeline of a year or a month", "The timeline events of a year (2026) or a month (2026-03), newest first (100 at most)."),
			tools: []string{"list_timeline_events"},
			read: func(ctx context.Context, run toolRun, uri, path string) (any, bool, error) {
				period, ok := strings.CutPrefix(path, "timeline/")
				if !ok || (len(period) != 4 && len(period) != 7) {
					return nil, false, nil
				}
				from, to, err := periodBounds(period)
				if err != nil {
					return nil, true, mcpsdk.ResourceNotFoundError(uri)
				}
				var page struct {
					Events json.RawMessage `json:"events"`
					Total  int             `json:"total"`
				}
				in := map[string]any{"after_date": from.Format(time.RFC3339), "before_date": to.Format(time.RFC3339), "limit": resourcePageSize}
				if err := run(ctx, "list_timeline_events", in, &page); err != nil {
					return nil, true, err
				}
				return map[string]any{"type": "timeline", "period": period, "events": page.Events, "total": page.Total, "uri": uri}, true, nil
			},
		},
		{
			tmpl:  jsonTemplate(resourceScheme+"source/{source_id}", "source", "A source", "One source: its metadata and the entities it produced."),
			tools: []string{"retrieve_graph_neighborhood"},
			read: func(ctx context.Context, run toolRun, uri, path string) (any, bool, error) {
				id, ok := strings.CutPrefix(path, "source/")
				if !ok || id == "" || strings.Contains(id, "/") {
					return nil, false, nil
				}
				var out map[string]any
				if err := run(ctx, "retrieve_graph_neighborhood", map[string]any{"node_id": id, "node_type": "source"}, &out); err != nil {
					return nil, true, err
				}
				out["type"], out["uri"] = "source", uri
				return out, true, nil
			},
		},
	}
}

// entityPart reads a list about one entity (cairn://entity/{id}/part) with
// tool, answering it as kind.
func entityPart(part, tool, kind string) func(ctx context.Context, run toolRun, uri, path string) (any, bool, error) {
	return func(ctx context.Context, run toolRun, uri, path string) (any, bool, error) {
		rest, ok := strings.CutPrefix(path, "entity/")
		id, found := strings.CutSuffix(rest, "/"+part)
		if !ok || !found || id == "" || strings.Contains(id, "/") {
			return nil, false, nil
		}
		var out map[string]any
		if err := run(ctx, tool, map[string]any{"entity_id": id, "limit": resourcePageSize}, &out); err != nil {
			return nil, true, err
		}
		out["type"], out["entity_id"], out["uri"] = kind, id, uri
		return out, true, nil
	}
}

// addResources registers the resource templates whose tools are enabled,
// and answers resources/list per caller (listResources).
func (s *Server) addResources(srv *mcpsdk.Server, who PrincipalFunc, transport string) []resourceSpec {
	var specs []resourceSpec
	for _, r := range resourceSpecs() {
		if !s.hasTools(r.tools...) {
			continue
		}
		specs = append(specs, r)
		srv.AddResourceTemplate(r.tmpl, func(ctx context.Context, req *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
			return s.readResource(ctx, who, transport, req, specs)
		})
	}
	return specs
}

// readResource answers resources/read: the template that owns the URI
// reads it for the caller. A tool's not-found or consent refusal is the
// resource's not-found, so a denied read and a missing one look alike.
func (s *Server) readResource(ctx context.Context, who PrincipalFunc, transport string, req *mcpsdk.ReadResourceRequest, specs []resourceSpec) (*mcpsdk.ReadResourceResult, error) {
	uri := req.Params.URI
	path, ok := strings.CutPrefix(uri, resourceScheme)
	if !ok {
		return nil, mcpsdk.ResourceNotFoundError(uri)
	}
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	run, err := s.runnerFor(ctx, who, req.Extra, transport)
	if err != nil {
		return nil, rpcError(err)
	}
	for _, r := range specs {
		v, mine, err := r.read(ctx, run, uri, path)
		if !mine {
			continue
		}
		var e *Error
		if errors.As(err, &e) && (e.Status == http.StatusNotFound || e.Body.Code == CodeConsentDenied) {
			return nil, mcpsdk.ResourceNotFoundError(uri)
		}
		if err != nil {
			return nil, rpcError(err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
	}
	return nil, mcpsdk.ResourceNotFoundError(uri)
}

// listResources answers resources/list for the caller: a collection per
// entity type it may read that holds entities (from get_user_context's
// entity_types), and a timeline per year of the newest events it may read.
func (s *Server) listResources(ctx context.Context, run toolRun) (*mcpsdk.ListResourcesResult, error) {
	out := &mcpsdk.ListResourcesResult{Resources: []*mcpsdk.Resource{}}
	if s.hasTools("get_user_context", "retrieve_entities") {
		var loaded struct {
			EntityTypes []struct {
				EntityType string `json:"entity_type"`
				Count      int    `json:"count"`
			} `json:"entity_types"`
		}
		if err := run(ctx, "get_user_context", map[string]any{}, &loaded); err != nil {
			return nil, err
		}
		for _, tc := range loaded.EntityTypes {
			if tc.Count == 0 {
				continue
			}
			out.Resources = append(out.Resources, &mcpsdk.Resource{
				URI: resourceScheme + "entities/" + tc.EntityType, Name: "entities/" + tc.EntityType, MIMEType: "application/json",
				Title: fmt.Sprintf("%s (%d)", tc.EntityType, tc.Count), Description: fmt.Sprintf("The %d %s entities.", tc.Count, tc.EntityType),
			})
		}
	}
	if s.hasTools("list_timeline_events") {
		periods, err := completePeriods(ctx, run, "")
		if err != nil {
			return nil, err
		}
		for _, p := range periods {
			if len(p) != 4 {
				continue
			}
			out.Resources = append(out.Resources, &mcpsdk.Resource{
				URI: resourceScheme + "timeline/" + p, Name: "timeline/" + p, MIMEType: "application/json",
				Title: "Timeline " + p, Description: "The timeline events of " + p + ".",
			})
		}
	}
	return out, nil
}
