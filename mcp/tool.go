package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/knowledge"
)

// Toolset groups tools that can be enabled together (--toolsets).
type Toolset string

// The toolsets.
const (
	ToolsetEntities      Toolset = "entities"
	ToolsetRelationships Toolset = "relationships"
	ToolsetTimeline      Toolset = "timeline"
	ToolsetSchema        Toolset = "schema"
	// ToolsetSchemaRegistry holds the tools that change schemas by hand
	// and read what the data suggests (register_schema, …); store evolves
	// schemas without them.
	ToolsetSchemaRegistry Toolset = "schema_registry"
	// ToolsetTables is Epitome's view of entity types as tables.
	ToolsetTables Toolset = "tables"
	// ToolsetConsent holds the owner-only tools that manage consent rules
	// and read the audit log.
	ToolsetConsent Toolset = "consent"
)

// Response budgets, in bytes of JSON, by kind of tool (context loading has
// BudgetContext, in budget.go).
const (
	BudgetList    = 2 << 10
	BudgetSummary = 5 << 10
	// BudgetSearch is search_memory's: ten typical memories (a sentence
	// or two, with their tags, metadata and scores, some 550 to 650 bytes
	// each) fit whole, so that an agent gets its answer in one call;
	// at 5 KB, 27% of such answers needed a second (issue 36).
	BudgetSearch = 8 << 10
)

// DefaultStringLimit is the longest string any argument may be unless its
// schema says otherwise; it keeps a runaway or hostile client from pushing
// megabytes into a field that holds a name.
const DefaultStringLimit = 1 << 20

// Call carries what a tool handler knows about the call besides its
// arguments.
type Call struct {
	Principal consent.Principal
	TraceID   string
	Tool      *Tool
	// Transport is the transport the call came by (TransportStdio, …).
	Transport string
	// decider answers consent questions for this call; nil allows
	// everything (a Server built without a policy).
	decider *consent.Decider
	// traced gives consent decisions spans while tracing is on; nil
	// otherwise.
	traced *tracedDecisions
}

// Caller returns the knowledge-domain view of the caller, whose Allowed
// asks this call's consent decider, so that every entity, memory and
// relationship the domain reads is filtered by the caller's consent.
func (c *Call) Caller() knowledge.Caller {
	kc := knowledge.Caller{UserID: c.Principal.UserID, AgentID: c.Principal.AgentName}
	if c.decider != nil {
		kc.Allowed = func(a knowledge.Action, resource string) bool { return c.May(consent.Action(a), resource) }
	}
	return kc
}

// May reports whether the caller may act on a resource; the decision is
// recorded for the audit log.
func (c *Call) May(action consent.Action, resource string) bool {
	if c.decider == nil {
		return true
	}
	if c.traced != nil {
		return c.traced.allowed(c.decider, action, resource)
	}
	return c.decider.Allowed(action, resource)
}

// Require returns CONSENT_DENIED unless the caller may act on a resource.
// Use it for what a tool needs depending on its arguments; what it always
// needs is declared in toolSpec.requires.
func (c *Call) Require(action consent.Action, resource string) error {
	if c.May(action, resource) {
		return nil
	}
	return consentDenied(c.Principal, action, resource)
}

// Tool is one MCP tool: its definition (name, description, typed input and
// output schemas, annotations), the toolset it belongs to, its response
// budget, and its handler.
type Tool struct {
	Toolset Toolset
	// Budget is the size, in bytes of JSON, that responses aim to stay
	// under.
	Budget int
	// Requires is what the tool always needs consent for; the call is
	// refused with CONSENT_DENIED before the handler runs unless every
	// requirement is allowed. What depends on the data (entity types,
	// memory collections) is checked inside, through Call.Caller.
	Requires []Requirement
	// RateClass is the rate limit the tool counts against.
	RateClass consent.RateClass
	// OwnerOnly tools answer FORBIDDEN to every agent but the owner's.
	OwnerOnly bool
	// Aliases are other names the tool answers to (older spec names);
	// tools/list does not show them.
	Aliases []string
	input   *jsonschema.Schema
	output  *jsonschema.Schema
	handle  func(ctx context.Context, call *Call, args json.RawMessage) (any, error)
	// def is the definition clients receive; its two schemas are
	// written by Def, once, from input and output.
	def     *mcpsdk.Tool
	defOnce sync.Once
}

// Def returns the tool's definition as tools/list sends it. Its schemas
// (the lean input and the compact output, see leanInput and
// compactOutput) are made on the first call: every server builds every
// tool, and most never list them (a server that is only invoked in
// process, a test's), while making them took as long as the rest of the
// tool together.
func (t *Tool) Def() *mcpsdk.Tool {
	t.defOnce.Do(func() {
		in, err := wireSchema(leanInput(t.input))
		if err != nil {
			panic(fmt.Sprintf("mcp: tool %s: input schema: %v", t.def.Name, err))
		}
		out, err := wireSchema(compactOutput(t.output))
		if err != nil {
			panic(fmt.Sprintf("mcp: tool %s: output schema: %v", t.def.Name, err))
		}
		t.def.InputSchema, t.def.OutputSchema = in, out
	})
	return t.def
}

// Name returns the tool's name.
func (t *Tool) Name() string { return t.def.Name }

// InputSchema returns the schema arguments are validated against. Def
// carries a leaner form of it, the one clients receive (see leanInput).
func (t *Tool) InputSchema() *jsonschema.Schema { return t.input }

// OutputSchema returns the full schema of the tool's results, nested
// objects and descriptions included. Clients receive a compact form of it
// in Def (see compactOutput); tests check results against both.
func (t *Tool) OutputSchema() *jsonschema.Schema { return t.output }

// ReadOnly reports whether the tool only reads.
func (t *Tool) ReadOnly() bool { return t.def.Annotations != nil && t.def.Annotations.ReadOnlyHint }

// Annotations describe a tool's effects; they are hints for clients, never a
// security boundary.
type annotations struct {
	readOnly    bool
	destructive bool
	idempotent  bool
}

var (
	readOnly   = annotations{readOnly: true, idempotent: true}
	additive   = annotations{idempotent: true}
	additiveNI = annotations{}
	destroys   = annotations{destructive: true}
)

// toolSpec is what a tool constructor declares.
type toolSpec struct {
	name, title, description string
	toolset                  Toolset
	ann                      annotations
	budget                   int
	// shape adjusts the inferred input schema: enums, bounds, defaults.
	shape func(in *jsonschema.Schema)
	// requires lists the consent the tool always needs (see
	// Tool.Requires).
	requires []Requirement
	// rateClass is the rate limit the tool counts against; empty means
	// consent.RateClassDefault.
	rateClass consent.RateClass
	// ownerOnly restricts the tool to the owner agent.
	ownerOnly bool
}

// Requirement is one consent a tool needs: an action on a resource.
type Requirement struct {
	Action   consent.Action `json:"action"`
	Resource string         `json:"resource"`
}

func reads(resources ...string) []Requirement {
	out := make([]Requirement, len(resources))
	for i, r := range resources {
		out[i] = Requirement{Action: consent.Read, Resource: r}
	}
	return out
}

func writes(resources ...string) []Requirement {
	out := make([]Requirement, len(resources))
	for i, r := range resources {
		out[i] = Requirement{Action: consent.Write, Resource: r}
	}
	return out
}

// newTool builds a Tool from a typed handler. The input and output schemas
// are inferred from In and Out (the json tag names a field, the jsonschema
// tag describes it, a field without omitempty is required), then adjusted by
// spec.shape, and every string without a limit gets DefaultStringLimit. The
// handler receives arguments that already passed the schema.
//
// What tools/list sends (Def) is leaner than what the server enforces and
// produces: hosts put every tool definition into the model's context on
// every turn, so Def carries what a model needs to call the tool well and
// nothing the server checks anyway (see leanInput and compactOutput).
func newTool[In, Out any](spec toolSpec, h func(context.Context, *Call, In) (Out, error)) *Tool {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: tool %s: input schema: %v", spec.name, err))
	}
	if spec.shape != nil {
		spec.shape(in)
	}
	limitStrings(in)
	addCommonArgs(in, spec.budget, spec.ann.readOnly)
	out, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: tool %s: output schema: %v", spec.name, err))
	}
	addMeta(out)
	destructive, openWorld := spec.ann.destructive, false
	t := &Tool{
		def: &mcpsdk.Tool{
			Name: spec.name, Title: spec.title, Description: spec.description,
			// The title is not repeated in the annotations: hosts show
			// Tool.Title first, and every byte here is in the model's
			// context on every turn.
			Annotations: &mcpsdk.ToolAnnotations{
				ReadOnlyHint: spec.ann.readOnly, IdempotentHint: spec.ann.idempotent,
				DestructiveHint: &destructive, OpenWorldHint: &openWorld,
			},
		},
		Toolset:   spec.toolset,
		Budget:    spec.budget,
		Requires:  spec.requires,
		RateClass: spec.rateClass,
		OwnerOnly: spec.ownerOnly,
		input:     in,
		output:    out,
	}
	if t.RateClass == "" {
		t.RateClass = consent.RateClassDefault
	}
	t.handle = func(ctx context.Context, call *Call, raw json.RawMessage) (any, error) {
		if _, err := decodeArgs(raw, t.input); err != nil {
			return nil, err
		}
		var args In
		if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&args); err != nil {
				return nil, &knowledge.ValidationError{Message: "arguments do not decode: " + err.Error(), Expected: "arguments matching the input schema"}
			}
		}
		return h(ctx, call, args)
	}
	return t
}

// limitStrings gives every string in s that has no maxLength the default
// limit, recursively.
func limitStrings(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	isString := s.Type == "string"
	for _, t := range s.Types {
		isString = isString || t == "string"
	}
	if isString && s.MaxLength == nil {
		n := DefaultStringLimit
		s.MaxLength = &n
	}
	for _, p := range s.Properties {
		limitStrings(p)
	}
	limitStrings(s.Items)
	if s.AdditionalProperties != nil && s.AdditionalProperties.Not == nil {
		limitStrings(s.AdditionalProperties)
	}
}

// Schema-shaping helpers for toolSpec.shape.

func prop(s *jsonschema.Schema, name string) *jsonschema.Schema {
	p, ok := s.Properties[name]
	if !ok {
		panic("mcp: schema has no property " + name)
	}
	return p
}

func enum(p *jsonschema.Schema, values ...string) {
	p.Enum = make([]any, len(values))
	for i, v := range values {
		p.Enum[i] = v
	}
}

func bounds(p *jsonschema.Schema, lo, hi float64) {
	p.Minimum, p.Maximum = &lo, &hi
}

func maxLen(p *jsonschema.Schema, n int) { p.MaxLength = &n }

func setDefault(p *jsonschema.Schema, v any) {
	b, _ := json.Marshal(v)
	p.Default = b
}

// idLimit bounds id arguments.
const idLimit = 256

// MaxToolsListBytes bounds the answer to tools/list with every tool
// enabled. Hosts put every tool definition into the model's context on every
// turn, so this is context an agent pays for before it does anything; a test
// keeps the default server under it.
const MaxToolsListBytes = 30_000

// DefinitionsBytes returns the size of the tools' definitions as tools/list
// sends them: the JSON array of them, in bytes. The whole answer adds a
// constant envelope of about 150 bytes (result type, server info, JSON-RPC).
func DefinitionsBytes(tools []*Tool) int {
	defs := make([]*mcpsdk.Tool, len(tools))
	for i, t := range tools {
		defs[i] = t.Def()
	}
	b, err := json.Marshal(defs)
	if err != nil {
		panic(fmt.Sprintf("mcp: tools/list: %v", err))
	}
	return len(b)
}
