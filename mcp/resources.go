package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
)

// Resources (Neotoma v1 §2.8) are read-only views a host can browse:
// entity collections by type, one entity, its observations and
// relationships, the timeline of a year or a month, the sources, one
// source and a stored file's bytes (a blob, cairn://source/{id}/file). Their
// URIs are cairn://…; neotoma://… is accepted as an alias. Like prompts,
// every read calls Cairn's own tools for the caller through Handle, so
// consent, budgets and the audit apply: what an agent may not read is not
// listed and reads as not found. resources/list lists, per caller, the
// collections of the entity types it may read that hold entities, and
// every year of the timeline events it may read; the parameterised forms
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
	// path (without the query), from offset in its list (lists only);
	// ok false means the URI is not of this template.
	read func(ctx context.Context, run toolRun, uri, path string, offset int) (any, bool, error)
	// paged says the resource is a list that takes ?offset=N.
	paged bool
	// blob says the resource is a stored file's bytes, which
	// readSourceFile answers (read is nil).
	blob bool
}

// A list resource answers up to resourcePageSize items from ?offset=N
// (default 0), fewer where the tool's response budget cuts the page, and
// says where the rest is: next_uri, the same URI at the offset after the
// last item answered, while total says there are more.

// maxResourceOffset bounds ?offset, as the tools bound theirs.
const maxResourceOffset = 1_000_000_000

// pageOf adds offset, and next_uri when the list goes on, to out, a list
// resource's answer whose page of the list named key holds n items of
// total.
func pageOf(out map[string]any, uri string, offset, n, total int) map[string]any {
	out["offset"] = offset
	if next := offset + n; n > 0 && next < total {
		base, _, _ := strings.Cut(uri, "?")
		out["next_uri"] = fmt.Sprintf("%s?offset=%d", base, next)
	}
	return out
}

// listLen is the length of a JSON array (0 for anything else).
func listLen(raw json.RawMessage) int {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return 0
	}
	return len(items)
}

func resourceSpecs() []resourceSpec {
	jsonTemplate := func(uri, name, title, desc string) *mcpsdk.ResourceTemplate {
		return &mcpsdk.ResourceTemplate{URITemplate: uri, Name: name, Title: title, Description: desc, MIMEType: "application/json"}
	}
	// A list's template takes its page's offset (RFC 6570 form-style
	// query: cairn://entities/invoice?offset=100).
	listTemplate := func(uri, name, title, desc string) *mcpsdk.ResourceTemplate {
		return jsonTemplate(uri+"{?offset}", name, title, desc+" From ?offset=N; next_uri continues the list.")
	}
	return []resourceSpec{
		{
			tmpl:  listTemplate(resourceScheme+"entities/{entity_type}", "entity_collection", "Entities of a type", "The entities of one type, newest first, 100 a page."),
			tools: []string{"retrieve_entities"},
			paged: true,
			read: func(ctx context.Context, run toolRun, uri, path string, offset int) (any, bool, error) {
				typ, ok := strings.CutPrefix(path, "entities/")
				if !ok || typ == "" || strings.Contains(typ, "/") {
					return nil, false, nil
				}
				var page struct {
					Entities json.RawMessage `json:"entities"`
					Total    int             `json:"total"`
				}
				err := run(ctx, "retrieve_entities", map[string]any{"entity_type": typ, "limit": resourcePageSize, "offset": offset}, &page)
				if err != nil {
					return nil, true, err
				}
				if page.Total == 0 {
					return nil, true, mcpsdk.ResourceNotFoundError(uri)
				}
				out := map[string]any{"type": "entity_collection", "entity_type": typ, "entities": page.Entities, "total": page.Total, "uri": uri}
				return pageOf(out, uri, offset, listLen(page.Entities), page.Total), true, nil
			},
		},
		{
			tmpl:  jsonTemplate(resourceScheme+"entity/{entity_id}", "entity", "An entity", "One entity: its snapshot with the provenance of each field."),
			tools: []string{"retrieve_entity_snapshot"},
			read: func(ctx context.Context, run toolRun, uri, path string, _ int) (any, bool, error) {
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
			tmpl:  listTemplate(resourceScheme+"entity/{entity_id}/observations", "entity_observations", "An entity's observations", "What each source said about one entity, newest first, 100 a page."),
			tools: []string{"list_observations"},
			paged: true,
			read:  entityPart("observations", "list_observations", "entity_observations"),
		},
		{
			tmpl:  listTemplate(resourceScheme+"entity/{entity_id}/relationships", "entity_relationships", "An entity's relationships", "The live relationships of one entity, both directions, 100 a page."),
			tools: []string{"list_relationships"},
			paged: true,
			read:  entityPart("relationships", "list_relationships", "entity_relationships"),
		},
		{
			tmpl:  listTemplate(resourceScheme+"timeline/{period}", "timeline", "Timeline of a year or a month", "The timeline events of a year (2026) or a month (2026-03), newest first, 100 a page."),
			tools: []string{"list_timeline_events"},
			paged: true,
			read: func(ctx context.Context, run toolRun, uri, path string, offset int) (any, bool, error) {
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
				in := map[string]any{"after_date": from.Format(time.RFC3339), "before_date": to.Format(time.RFC3339), "limit": resourcePageSize, "offset": offset}
				if err := run(ctx, "list_timeline_events", in, &page); err != nil {
					return nil, true, err
				}
				out := map[string]any{"type": "timeline", "period": period, "events": page.Events, "total": page.Total, "uri": uri}
				return pageOf(out, uri, offset, listLen(page.Events), page.Total), true, nil
			},
		},
		{
			tmpl:  jsonTemplate(resourceScheme+"source/{source_id}", "source", "A source", "One source: its metadata and the entities it produced."),
			tools: []string{"retrieve_graph_neighborhood"},
			read: func(ctx context.Context, run toolRun, uri, path string, _ int) (any, bool, error) {
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
		{
			tmpl:  listTemplate(resourceScheme+"sources", "source_collection", "Sources", "Your sources (store calls, files, corrections, …), newest first, 100 a page."),
			tools: []string{"list_sources"},
			paged: true,
			read: func(ctx context.Context, run toolRun, uri, path string, offset int) (any, bool, error) {
				if path != "sources" {
					return nil, false, nil
				}
				var page struct {
					Sources []map[string]any `json:"sources"`
					Total   int              `json:"total"`
				}
				if err := run(ctx, "list_sources", map[string]any{"limit": resourcePageSize, "offset": offset}, &page); err != nil {
					return nil, true, err
				}
				for _, src := range page.Sources {
					id, _ := src["id"].(string)
					src["uri"] = resourceScheme + "source/" + id
				}
				if page.Sources == nil {
					page.Sources = []map[string]any{}
				}
				out := map[string]any{"type": "source_collection", "sources": page.Sources, "total": page.Total, "uri": uri}
				return pageOf(out, uri, offset, len(page.Sources), page.Total), true, nil
			},
		},
		{
			tmpl: &mcpsdk.ResourceTemplate{
				URITemplate: resourceScheme + "source/{source_id}/file", Name: "source_file", Title: "A source's file",
				Description: fmt.Sprintf("The bytes of a stored file (a source of kind file), with its MIME type; up to %d MiB, get_file_url for larger.", MaxResourceFileBytes>>20),
			},
			tools: []string{"retrieve_graph_neighborhood"},
			blob:  true,
		},
	}
}

// MaxResourceFileBytes bounds the file a cairn://source/{id}/file read
// answers: its bytes travel base64 in one JSON-RPC message, a third larger,
// which a host holds whole. A larger file is an error that says so and
// points to get_file_url, whose URL streams it.
const MaxResourceFileBytes = 8 << 20

// readSourceFile answers cairn://source/{id}/file: the file's bytes, base64
// with its MIME type (MCP's BlobResourceContents), when the caller may read
// the source. Whether it may is decided by the source resource's own tool,
// retrieve_graph_neighborhood, through Handle (consent on sources and on
// the file's data, budgets, the audit); the bytes are then read as the
// signed-URL route reads them, under the authority of that decision.
func (s *Server) readSourceFile(ctx context.Context, run toolRun, userID, uri, id string) (*mcpsdk.ReadResourceResult, error) {
	var n struct {
		Source *SourceOut `json:"source_material"`
	}
	in := map[string]any{"node_id": id, "node_type": "source", "include_relationships": false, "include_events": false, "include_sources": false}
	if err := run(ctx, "retrieve_graph_neighborhood", in, &n); err != nil {
		return nil, err
	}
	if n.Source == nil || n.Source.Kind != graph.SourceFile || s.deps.Files == nil {
		return nil, mcpsdk.ResourceNotFoundError(uri)
	}
	r, f, err := s.deps.Files.Open(ctx, userID, id)
	if errors.Is(err, files.ErrFileNotFound) {
		return nil, mcpsdk.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if f.Size > MaxResourceFileBytes {
		return nil, invalidParams(fmt.Sprintf("%s: the file is %d bytes, more than the %d a resource read answers; get_file_url gives a URL to download it", uri, f.Size, MaxResourceFileBytes))
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxResourceFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("mcp: read file %s: %w", id, err)
	}
	if len(b) > MaxResourceFileBytes {
		return nil, invalidParams(fmt.Sprintf("%s: the file is more than the %d bytes a resource read answers; get_file_url gives a URL to download it", uri, MaxResourceFileBytes))
	}
	mime := f.MimeType
	if mime == "" {
		mime = "application/octet-stream"
	}
	return &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{URI: uri, MIMEType: mime, Blob: b}}}, nil
}

// entityPart reads a list about one entity (cairn://entity/{id}/part) with
// tool, answering it as kind.
func entityPart(part, tool, kind string) func(ctx context.Context, run toolRun, uri, path string, offset int) (any, bool, error) {
	return func(ctx context.Context, run toolRun, uri, path string, offset int) (any, bool, error) {
		rest, ok := strings.CutPrefix(path, "entity/")
		id, found := strings.CutSuffix(rest, "/"+part)
		if !ok || !found || id == "" || strings.Contains(id, "/") {
			return nil, false, nil
		}
		var out map[string]any
		if err := run(ctx, tool, map[string]any{"entity_id": id, "limit": resourcePageSize, "offset": offset}, &out); err != nil {
			return nil, true, err
		}
		out["type"], out["entity_id"], out["uri"] = kind, id, uri
		items, _ := out[part].([]any)
		total, _ := out["total"].(float64)
		return pageOf(out, uri, offset, len(items), int(total)), true, nil
	}
}

// addResources registers the resource templates whose tools are enabled,
// and answers resources/list per caller (listResources).
func (s *Server) addResources(srv *mcpsdk.Server, who PrincipalFunc, transport string) []resourceSpec {
	var specs []resourceSpec
	for _, r := range resourceSpecs() {
		if !s.hasTools(r.tools...) || (r.blob && s.deps.Files == nil) {
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
	path, query, hasQuery := strings.Cut(path, "?")
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	offset, err := resourceOffset(query)
	if err != nil {
		return nil, invalidParams(fmt.Sprintf("%s: %v", uri, err))
	}
	p, err := who(ctx, req.Extra)
	if err != nil {
		return nil, rpcError(toError(err))
	}
	run := s.runnerOf(p, transport)
	if id, ok := sourceFileID(path); ok && slices.ContainsFunc(specs, func(r resourceSpec) bool { return r.blob }) {
		if hasQuery {
			return nil, mcpsdk.ResourceNotFoundError(uri)
		}
		res, err := s.readSourceFile(ctx, run, p.UserID, uri, id)
		var e *Error
		if errors.As(err, &e) && (e.Status == http.StatusNotFound || e.Body.Code == CodeConsentDenied) {
			return nil, mcpsdk.ResourceNotFoundError(uri)
		}
		if err != nil {
			return nil, rpcError(err)
		}
		return res, nil
	}
	for _, r := range specs {
		if r.read == nil {
			continue
		}
		v, mine, err := r.read(ctx, run, uri, path, offset)
		if !mine {
			continue
		}
		if hasQuery && !r.paged {
			return nil, mcpsdk.ResourceNotFoundError(uri)
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

// sourceFileID is the source id of a cairn://source/{id}/file path.
func sourceFileID(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "source/")
	id, found := strings.CutSuffix(rest, "/file")
	if !ok || !found || id == "" || strings.Contains(id, "/") {
		return "", false
	}
	return id, true
}

// typeCount is an entity type and how many entities it has.
type typeCount struct {
	EntityType string `json:"entity_type"`
	Count      int    `json:"count"`
}

// typesOnlyKey marks the context of a get_user_context call that
// readableTypeCounts makes: it loads the type inventory alone
// (knowledge.ContextRequest.TypesOnly), consented and audited as any
// context load is.
type typesOnlyKey struct{}

// readableTypeCounts returns the entity types the caller may read that
// hold entities, those with the most entities first: the type inventory of
// get_user_context, which has a share of the context's token budget, at
// its largest budget (some hundreds of types; the templates and
// completions reach the rest), loaded alone.
func readableTypeCounts(ctx context.Context, run toolRun) ([]typeCount, error) {
	var loaded struct {
		EntityTypes []typeCount `json:"entity_types"`
	}
	if err := run(context.WithValue(ctx, typesOnlyKey{}, true), "get_user_context", map[string]any{"budget_tokens": knowledge.MaxContextBudget}, &loaded); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(loaded.EntityTypes, func(tc typeCount) bool { return tc.Count == 0 }), nil
}

// resourceOffset reads a list resource's query: offset=N or nothing.
func resourceOffset(query string) (int, error) {
	if query == "" {
		return 0, nil
	}
	v, err := url.ParseQuery(query)
	if err != nil {
		return 0, fmt.Errorf("bad query: %w", err)
	}
	for k := range v {
		if k != "offset" {
			return 0, fmt.Errorf("unknown parameter %q (a list takes offset)", k)
		}
	}
	n, err := strconv.Atoi(v.Get("offset"))
	if err != nil || n < 0 || n > maxResourceOffset || len(v["offset"]) != 1 {
		return 0, fmt.Errorf("offset must be one integer from 0 to %d", maxResourceOffset)
	}
	return n, nil
}

// listResources answers resources/list for the caller: a collection per
// entity type it may read that holds entities (from get_user_context's
// entity_types), the sources collection when it may read a source, and a
// timeline per year of the newest events it may read.
// It answers resourceListPage resources from cursor (nextCursor goes on).
func (s *Server) listResources(ctx context.Context, run toolRun, cursor string) (*mcpsdk.ListResourcesResult, error) {
	from := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 0 {
			return nil, invalidParams("resources/list: the cursor is not one this server gave")
		}
		from = n
	}
	out, err := s.allResources(ctx, run)
	if err != nil {
		return nil, err
	}
	if from > len(out.Resources) {
		return nil, invalidParams("resources/list: the cursor is not one this server gave")
	}
	if end := from + resourceListPage; end < len(out.Resources) {
		out.Resources, out.NextCursor = out.Resources[from:end], strconv.Itoa(end)
	} else {
		out.Resources = out.Resources[from:]
	}
	return out, nil
}

// resourceListPage is how many resources one resources/list answers.
const resourceListPage = 100

// allResources is every resource listResources pages through.
func (s *Server) allResources(ctx context.Context, run toolRun) (*mcpsdk.ListResourcesResult, error) {
	out := &mcpsdk.ListResourcesResult{Resources: []*mcpsdk.Resource{}}
	if s.hasTools("get_user_context", "retrieve_entities") {
		types, err := readableTypeCounts(ctx, run)
		if err != nil {
			return nil, err
		}
		for _, tc := range types {
			out.Resources = append(out.Resources, &mcpsdk.Resource{
				URI: resourceScheme + "entities/" + tc.EntityType, Name: "entities/" + tc.EntityType, MIMEType: "application/json",
				Title: fmt.Sprintf("%s (%d)", tc.EntityType, tc.Count), Description: fmt.Sprintf("The %s.", counted(tc.Count, tc.EntityType+" entity", tc.EntityType+" entities")),
			})
		}
	}
	if s.hasTools("list_sources") {
		var page struct {
			Total int `json:"total"`
		}
		err := run(ctx, "list_sources", map[string]any{"limit": 1}, &page)
		var e *Error
		switch {
		case errors.As(err, &e) && e.Body.Code == CodeConsentDenied:
			// No sources to list for a caller that may not read them.
		case err != nil:
			return nil, err
		case page.Total > 0:
			out.Resources = append(out.Resources, &mcpsdk.Resource{
				URI: resourceScheme + "sources", Name: "sources", MIMEType: "application/json",
				Title: fmt.Sprintf("Sources (%d)", page.Total), Description: fmt.Sprintf("Your %s, newest first.", counted(page.Total, "source", "sources")),
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

// counted is n followed by one or many, as n calls for: "1 source",
// "2 sources".
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
