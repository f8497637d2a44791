package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// ToolsetCompat holds Neotoma v0's action names (neotoma-mcp-v0.md §2–3)
// for clients written against it. Each one runs the handler of the Cairn
// tool it stands for, with the v0 arguments translated to Cairn's and the
// answer to v0's shape; its consent, rate class and budget are that tool's.
// Not a default toolset: the names cost context and a new client has
// Cairn's. docs/compat.md lists what maps where, and what has no
// counterpart.
const ToolsetCompat Toolset = "compat"

// Error codes of v0 that Cairn's own tools do not answer.
const (
	CodeUnknownCapability = "UNKNOWN_CAPABILITY"
	CodeRecordNotFound    = "RECORD_NOT_FOUND"
	CodeDBInsertFailed    = "DB_INSERT_FAILED"
	CodeDBUpdateFailed    = "DB_UPDATE_FAILED"
	CodeSearchFailed      = "SEARCH_FAILED"
	CodeUploadFailed      = "UPLOAD_FAILED"
)

// v0Codes is the one table of how a v0 action names a failure that the
// Cairn tool behind it names otherwise: action → Cairn code → v0 code. A
// code not listed is answered as Cairn answers it (v0 has no consent, rate
// limits or merges, and shares VALIDATION_ERROR, ENTITY_NOT_FOUND,
// FIELD_NOT_FOUND, FILE_NOT_FOUND, FILE_TOO_LARGE, UNSUPPORTED_FILE_TYPE and
// SIGNING_FAILED with Cairn). The envelope itself is v0's (§4) already.
var v0Codes = map[string]map[string]string{
	"submit_payload":       {CodeInternal: CodeDBInsertFailed},
	"get_entity_snapshot":  {CodeInternal: CodeDBQueryFailed},
	"get_field_provenance": {CodeInternal: CodeDBQueryFailed},
	"retrieve_records":     {CodeInternal: CodeSearchFailed},
	"update_record":        {CodeEntityNotFound: CodeRecordNotFound, CodeInternal: CodeDBUpdateFailed},
	"upload_file":          {CodeInternal: CodeUploadFailed, CodeFileReadError: CodeUploadFailed},
}

// v0Error is a Cairn failure under the code a v0 action gives it. It
// unwraps to the envelope only, so that toError sends it as it is, and its
// text keeps the cause for the server log.
type v0Error struct {
	env   *Error
	cause error
}

func (e *v0Error) Error() string { return e.env.Error() + " (" + e.cause.Error() + ")" }
func (e *v0Error) Unwrap() error { return e.env }

// v0Failure renames err's code as v0Codes says for action.
func v0Failure(action string, err error) error {
	e := toError(err)
	code, ok := v0Codes[action][e.Body.Code]
	if !ok {
		return err
	}
	renamed := *e
	renamed.Body.Code = code
	return &v0Error{env: &renamed, cause: err}
}

// compatSpec declares a v0 alias: its name and words, the Cairn tool it
// stands for (whose consent, rate class, annotations and budget it takes),
// and any other Cairn tools its translation calls (whose consent it needs
// too).
type compatSpec struct {
	name, title, description string
	target                   *Tool
	also                     []*Tool
	shape                    func(in *jsonschema.Schema)
}

// compatTool builds a v0 alias around h, which translates and calls the
// Cairn tools' handlers through runTool; its failures are renamed by
// v0Codes.
func compatTool[In, Out any](spec compatSpec, h func(context.Context, *Call, In) (Out, error)) *Tool {
	requires := slices.Clone(spec.target.Requires)
	for _, t := range spec.also {
		for _, r := range t.Requires {
			if !slices.Contains(requires, r) {
				requires = append(requires, r)
			}
		}
	}
	a := spec.target.def.Annotations
	return newTool(toolSpec{
		name: spec.name, title: spec.title, description: spec.description, toolset: ToolsetCompat,
		ann:    annotations{readOnly: a.ReadOnlyHint, idempotent: a.IdempotentHint, destructive: a.DestructiveHint != nil && *a.DestructiveHint},
		budget: spec.target.Budget, shape: spec.shape, requires: requires,
		rateClass: spec.target.RateClass, ownerOnly: spec.target.OwnerOnly,
	}, func(ctx context.Context, call *Call, in In) (Out, error) {
		out, err := h(ctx, call, in)
		if err != nil {
			return out, v0Failure(spec.name, err)
		}
		return out, nil
	})
}

// v0Alias builds the alias of one Cairn tool, spec.target: args turns the
// v0 arguments into the target's, and answer turns the target's answer into
// v0's.
func v0Alias[In, CIn, COut, Out any](spec compatSpec, args func(In) (CIn, error), answer func(COut) Out) *Tool {
	return compatTool(spec, func(ctx context.Context, call *Call, in In) (Out, error) {
		var zero Out
		cin, err := args(in)
		if err != nil {
			return zero, err
		}
		out, err := runTool[COut](ctx, call, spec.target, cin)
		if err != nil {
			return zero, err
		}
		return answer(out), nil
	})
}

// sameArgs is args for an alias whose arguments are its target's.
func sameArgs[T any](in T) (T, error) { return in, nil }

// runTool runs a Cairn tool's own handler in a call, as if it had been
// called with args: they are checked against its input schema, and its
// typed answer is returned. Consent asks the call's decider, so every
// decision is the call's and is audited with it.
func runTool[Out any](ctx context.Context, call *Call, t *Tool, args any) (Out, error) {
	var zero Out
	raw, err := json.Marshal(args)
	if err != nil {
		return zero, err
	}
	res, err := t.handle(ctx, call, raw)
	if err != nil {
		return zero, err
	}
	out, ok := res.(Out)
	if !ok {
		return zero, fmt.Errorf("mcp: %s answered %T, not %T", t.Name(), res, zero)
	}
	return out, nil
}

// compatTools are the v0 aliases of the Cairn tools in cairn, which are
// the tools AllTools built (the aliases run those very handlers).
func compatTools(cairn []*Tool) []*Tool {
	byName := map[string]*Tool{}
	for _, t := range cairn {
		byName[t.Name()] = t
	}
	tool := func(name string) *Tool {
		t, ok := byName[name]
		if !ok {
			panic("mcp: compat: no tool " + name)
		}
		return t
	}
	return []*Tool{
		submitPayloadTool(tool("store")),
		getEntitySnapshotTool(tool("retrieve_entity_snapshot")),
		getFieldProvenanceTool(tool("retrieve_field_provenance")),
		retrieveRecordsTool(tool("retrieve_entities")),
		updateRecordTool(tool("correct"), tool("retrieve_entity_snapshot")),
		uploadFileTool(tool("store")),
		getFileURLTool(tool("retrieve_file_url")),
	}
}
