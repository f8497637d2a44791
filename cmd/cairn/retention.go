package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/mcp"
)

// retentionFlags bound how long serve and stdio keep audit records.
type retentionFlags struct {
	retention string
	archive   string
}

func (r *retentionFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.retention, "audit-retention", "0", "delete audit records older than this (90d, 720h; at least 1h), hourly, in small batches; 0 keeps them forever")
	fs.StringVar(&r.archive, "audit-archive", "", "directory that receives what --audit-retention deletes, before it is deleted: one gzip JSON Lines file per run")
}

var retentionEnv = []envVar{{"audit-retention", "CAIRN_AUDIT_RETENTION"}, {"audit-archive", "CAIRN_AUDIT_ARCHIVE"}}

// apply sets the retention in cfg.
func (r *retentionFlags) apply(cfg *appConfig) error {
	keep, err := parseDuration(r.retention)
	switch {
	case err != nil || keep < 0:
		return usageError{fmt.Sprintf("--audit-retention %q: give a duration such as 90d or 720h, or 0 to keep records forever", r.retention)}
	case keep > 0 && keep < controlplane.MinAuditRetention:
		return usageError{fmt.Sprintf("--audit-retention %q: keep records at least %v", r.retention, controlplane.MinAuditRetention)}
	case keep == 0 && r.archive != "":
		return usageError{"--audit-archive archives what --audit-retention deletes: set --audit-retention too"}
	}
	cfg.auditRetention = controlplane.AuditRetention{Keep: keep, ArchiveDir: r.archive}
	return nil
}

// startAuditRetention runs the audit log's retention, when one is set,
// until ctx ends or the app closes: off the request path, hourly.
func (a *app) startAuditRetention(ctx context.Context, r controlplane.AuditRetention) {
	if r.Keep == 0 {
		return
	}
	a.background(ctx, func(ctx context.Context) { a.control.RunAuditRetention(ctx, r, 0, a.log) })
}

// startChangeLogPruning deletes, at start and hourly, the graph's logged
// changes older than subscriptions read them (mcp.ChangeRetention). The
// subscription watcher prunes as it polls, but only while a session is
// open: a server that nobody subscribes to (REST calls, an import, jobs)
// would otherwise keep a row for every change it ever made.
func (a *app) startChangeLogPruning(ctx context.Context) {
	a.background(ctx, func(ctx context.Context) {
		t := time.NewTicker(time.Hour)
		defer t.Stop()
		for {
			if err := a.graph.PruneChanges(ctx, time.Now().Add(-mcp.ChangeRetention)); err != nil && ctx.Err() == nil {
				a.log.Warn("prune the graph's change log", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}
