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
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge"
)

// cairn admin erase: the operator's erasure of entities, sources or all of
// a user's entities (issue 37, docs/forgetting.md). It opens the whole
// store (graph, vectors, control plane), erases as the user's operator
// (every type, no consent rule applies), records each erasure in the audit
// log, and with --dry-run erases nothing and says what would go.

// eraseBatch is how many entities one erasure of --user takes: each batch
// commits on its own, so that a run that stops (a crash, Ctrl-C) has
// erased whole batches, and running it again goes on with what is left.
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
	app, err := openApp(ctx, a.f.common.appConfig(), log)
	if err != nil {
		return err
	}
	defer app.Close()
	caller := knowledge.Caller{UserID: u.ID, AgentID: "operator"}
	run := func(kind knowledge.EraseKind, ids []string) (knowledge.EraseResult, error) {
		res, err := app.knowledge.Erase(ctx, caller, knowledge.EraseRequest{Kind: kind, IDs: ids, Reason: a.f.reason, DryRun: a.f.dryRun})
		if !a.f.dryRun {
			a.auditErase(ctx, u, kind, err)
		}
		return res, err
	}
	if !whole {
		kind, ids := knowledge.EraseEntity, entities
		if len(sources) > 0 {
			kind, ids = knowledge.EraseSource, sources
		}
		res, err := run(kind, ids)
		if err != nil {
			return err
		}
		a.printErase(res)
		return nil
	}
	// Every entity of the user, a batch at a time, with progress.
	total := map[string]int{}
	done, offset, start := 0, 0, time.Now()
	for {
		var page []graph.Entity
		if err := app.graph.View(ctx, func(tx *graph.Tx) error {
			var err error
			page, _, err = tx.ListEntities(ctx, graph.EntityFilter{UserID: u.ID, IncludeMerged: true, Page: graph.Page{Limit: eraseBatch, Offset: offset}})
			return err
		}); err != nil {
			return err
		}
		if len(page) == 0 {
			break
		}
		ids := make([]string, len(page))
		for i, e := range page {
			ids[i] = e.ID
		}
		res, err := run(knowledge.EraseEntity, ids)
		if err != nil {
			return fmt.Errorf("after %d entities erased: %w", done, err)
		}
		for k, n := range res.Counts {
			total[k] += n
		}
		done += len(ids)
		if a.f.dryRun {
			offset += len(ids)
		}
		fmt.Fprintf(a.errw, "%d entities %s (%s)\n", done, map[bool]string{true: "counted", false: "erased"}[a.f.dryRun], time.Since(start).Round(time.Second))
	}
	a.printErase(knowledge.EraseResult{Kind: knowledge.EraseEntity, Counts: total, DryRun: a.f.dryRun, At: time.Now().UTC()})
	fmt.Fprintf(a.out, "user %s: %d entities; memories are erased with delete_memory, the user record is kept\n", u.Name, done)
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
	for _, k := range slices.Sorted(maps.Keys(res.Counts)) {
		fmt.Fprintf(a.out, "  %-26s %d\n", k, res.Counts[k])
	}
}

// auditErase records an operator's erasure: the kind, the user, the
// outcome; never the ids or the reason, which the tombstones keep.
func (a *admin) auditErase(ctx context.Context, u consent.User, kind knowledge.EraseKind, err error) {
	code := "OK"
	if err != nil {
		code = "ERROR"
	}
	resource := "graph"
	if kind == knowledge.EraseSource {
		resource = knowledge.ResourceSources
	}
	rec := consent.AuditRecord{
		At: time.Now().UTC(), UserID: u.ID, AgentName: "operator", Transport: "cli", Tool: "admin erase",
		Kind: consent.AuditDecision, Action: consent.Delete, Resource: resource, Decision: consent.Allow, ResultCode: code, Count: 1,
	}
	if aerr := a.store.AppendAudit(ctx, []consent.AuditRecord{rec}); aerr != nil {
		fmt.Fprintf(a.errw, "the erasure was not recorded in the audit log: %v\n", aerr)
	}
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
