package main

import (
	"errors"
	"testing"
	"time"
)

func TestRetentionFlags(t *testing.T) {
	for _, tc := range []struct {
		name      string
		flags     retentionFlags
		keep      time.Duration
		archive   string
		wantUsage bool
	}{
		{name: "default keeps forever", flags: retentionFlags{retention: "0"}},
		{name: "days", flags: retentionFlags{retention: "90d"}, keep: 90 * 24 * time.Hour},
		{name: "hours with an archive", flags: retentionFlags{retention: "720h", archive: "/var/archive"}, keep: 720 * time.Hour, archive: "/var/archive"},
		{name: "shorter than an hour", flags: retentionFlags{retention: "30m"}, wantUsage: true},
		{name: "negative", flags: retentionFlags{retention: "-1h"}, wantUsage: true},
		{name: "not a duration", flags: retentionFlags{retention: "soon"}, wantUsage: true},
		{name: "archive without retention", flags: retentionFlags{retention: "0", archive: "/var/archive"}, wantUsage: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cfg appConfig
			err := tc.flags.apply(&cfg)
			var usage usageError
			if tc.wantUsage {
				if !errors.As(err, &usage) {
					t.Fatalf("apply = %v, want a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.auditRetention.Keep != tc.keep || cfg.auditRetention.ArchiveDir != tc.archive {
				t.Errorf("retention = %+v, want keep %v, archive %q", cfg.auditRetention, tc.keep, tc.archive)
			}
		})
	}
}
