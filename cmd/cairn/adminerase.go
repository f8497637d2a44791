package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/knowledge"
)

// cairn admin erase: the operator's erasure of entities, sources or all of
// a user's data (issue 37, docs/forgetting.md; the last in eraseuser.go). It opens the whole
// store (graph, vectors, control plane), erases as the user's operator
// (every type, no consent rule applies), records each erasure in the audit
// log, and with --dry-run erases nothing and says what would go.

// eraseBatch is how many entities or sources one erasure of --user takes:
// each batch commits on its own, so that a run that stops (a crash,
// Ctrl-C) has erased whole batches, and running it again goes on with what
// is left.
const eraseBatch = knowledge.MaxEraseBatch

func (a *admin) erase(ctx context.Context, log *slog.Logger) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	entities, sources := splitIDs(a.f.entity), splitIDs(a.f.source)
	if len(entities) > 0 && len(sources) > 0 {
		return usageError{"admin erase: give --entity or --source, not both"}
	}
	whole := len(entities) == 0 && len(sources) == 0
	if whole && a.f.user == "" {
		return usageError{"admin erase needs --entity ID, --source ID or --user NAME"}
	}
	u, err := a.user(ctx)
	if err != nil {
		return err
	}
	cfg := a.f.common.appConfig()
	cfg.files.blobURL = a.f.blobURL
	app, err := openApp(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer app.Close()
	if whole {
		return a.eraseUser(ctx, app, u)
	}
	kind, ids := knowledge.EraseEntity, entities
	if len(sources) > 0 {
		kind, ids = knowledge.EraseSource, sources
	}
	caller := knowledge.Caller{UserID: u.ID, AgentID: "operator"}
	res, err := app.knowledge.Erase(ctx, caller, knowledge.EraseRequest{Kind: kind, IDs: ids, Reason: a.f.reason, DryRun: a.f.dryRun})
	if !a.f.dryRun {
		a.auditErase(ctx, u, eraseResource(kind), err)
	}
	if err != nil {
		return err
	}
	a.printErase(res)
	return nil
}

// printErase writes what an erasure removed, one kind a line.
func (a *admin) printErase(res knowledge.EraseResult) {
	verb := "erased"
	if res.DryRun {
		verb = "would erase"
	}
	fmt.Fprintf(a.out, "%s %s %s\n", verb, res.Kind, strings.Join(res.IDs, ", "))
	if len(res.Entities) > 0 {
		fmt.Fprintf(a.out, "entities: %s\n", strings.Join(res.Entities, ", "))
	}
	if len(res.Recomputed) > 0 {
		fmt.Fprintf(a.out, "recomputed: %s\n", strings.Join(res.Recomputed, ", "))
	}
	a.printCounts(res.Counts)
}

// printCounts writes counts per kind, one a line, by kind.
func (a *admin) printCounts(counts map[string]int) {
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(a.out, "  %-26s %d\n", k, counts[k])
	}
}

// auditErase records an operator's erasure: what it erased (graph,
// sources, or * for all of a user's data), the user, the outcome; never
// the ids or the reason, which the tombstones keep.
func (a *admin) auditErase(ctx context.Context, u consent.User, resource string, err error) {
	code := "OK"
	if err != nil {
		code = "ERROR"
	}
	rec := consent.AuditRecord{
		At: time.Now().UTC(), UserID: u.ID, AgentName: "operator", Transport: "cli", Tool: "admin erase",
		Kind: consent.AuditDecision, Action: consent.Delete, Resource: resource, Decision: consent.Allow, ResultCode: code, Count: 1,
	}
	if aerr := a.store.AppendAudit(ctx, []consent.AuditRecord{rec}); aerr != nil {
		fmt.Fprintf(a.errw, "the erasure was not recorded in the audit log: %v\n", aerr)
	}
}

// eraseResource is the consent resource an erasure's audit record names.
func eraseResource(kind knowledge.EraseKind) string {
	if kind == knowledge.EraseSource {
		return knowledge.ResourceSources
	}
	return "graph"
}

// splitIDs splits a comma-separated flag into ids.
func splitIDs(s string) []string {
	var out []string
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	return out
}
