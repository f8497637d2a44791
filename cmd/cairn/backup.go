package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/cairnkg/cairn/db/sqlite"
)

// Backup and restore cover the embedded store. A deployment on PostgreSQL
// (and Neo4j) backs up with those servers' own tools: docs/backup.md.

const backupElsewhere = "backup and restore cover the embedded store; back up PostgreSQL with pg_dump and Neo4j with neo4j-admin (docs/backup.md)"

func backupCommand() *command {
	return &command{
		name:    "backup",
		summary: "copy the embedded store to a file, consistently, while cairn serve runs",
		usage:   "backup [--force] [flags] FILE",
		help: `
Write a consistent copy of the embedded store in --data-dir to FILE. It may
run while cairn serve (or stdio) uses the store: the copy is one snapshot
(SQLite's VACUUM INTO), taken without stopping writers, and compacted.

The copy is written beside FILE under a temporary name, checked (SQLite's
integrity check, Cairn's migrations) and only then renamed to FILE, so FILE
is either a complete, sound store or absent. An existing FILE is an error
unless --force is given. It prints the copy's size, schema version and row
counts. cairn restore puts a copy back.

API keys are in the store as hashes only, but the copy holds every user's
data: keep it as you keep the store. A deployment on PostgreSQL backs up
with pg_dump (docs/backup.md).`,
		env: storeEnv,
		setup: func(fs *flag.FlagSet) runFunc {
			var common commonFlags
			common.registerStore(fs)
			force := fs.Bool("force", false, "replace FILE if it exists")
			return func(ctx context.Context, env *environment) error {
				file, err := oneFileArg(fs)
				if err != nil {
					return err
				}
				if common.databaseURL != "" || common.neo4j.uri != "" {
					return usageError{backupElsewhere}
				}
				if err := requireStore(common.dataDir); err != nil {
					return err
				}
				start := time.Now()
				info, err := sqlite.Backup(ctx, common.dataDir, file, *force)
				if err != nil {
					return err
				}
				fmt.Fprintf(env.stdout, "backed up %s to %s in %s\n", absPath(common.dataDir), info.Path, time.Since(start).Round(time.Millisecond))
				printStoreInfo(env.stdout, info)
				return nil
			}
		},
	}
}

func restoreCommand() *command {
	return &command{
		name:    "restore",
		summary: "replace the embedded store with a copy made by cairn backup, after checking it",
		usage:   "restore [flags] FILE",
		help: `
Replace the embedded store in --data-dir with the copy in FILE. The copy is
checked first (SQLite's integrity check, Cairn's migrations, no migration
newer than this cairn knows); a copy that fails is refused and nothing
changes.

Stop cairn serve, stdio and any other cairn process using the store first:
restore refuses a store that a process has open. The store it replaces is
kept beside it as cairn.db.pre-restore-<time> (with its WAL); delete it when
you no longer need it. A data directory without a store gets the copy. A copy
from an older cairn is migrated when the store is next opened.`,
		env: storeEnv,
		setup: func(fs *flag.FlagSet) runFunc {
			var common commonFlags
			common.registerStore(fs)
			return func(ctx context.Context, env *environment) error {
				file, err := oneFileArg(fs)
				if err != nil {
					return err
				}
				if common.databaseURL != "" || common.neo4j.uri != "" {
					return usageError{backupElsewhere}
				}
				info, previous, err := sqlite.Restore(ctx, common.dataDir, file)
				if err != nil {
					return err
				}
				fmt.Fprintf(env.stdout, "restored %s from %s\n", info.Path, file)
				printStoreInfo(env.stdout, info)
				if previous != "" {
					fmt.Fprintf(env.stdout, "the store it replaced is kept at %s\n", previous)
				}
				return nil
			}
		},
	}
}

// oneFileArg returns the command's one positional argument.
func oneFileArg(fs *flag.FlagSet) (string, error) {
	switch fs.NArg() {
	case 0:
		return "", usageError{"missing FILE"}
	case 1:
		return fs.Arg(0), nil
	default:
		return "", usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(1))}
	}
}

func printStoreInfo(w io.Writer, info sqlite.Info) {
	fmt.Fprintf(w, "  %d bytes, schema version %d\n", info.Bytes, info.Version)
	for _, t := range sqlite.CountedTables() {
		fmt.Fprintf(w, "  %-13s %d\n", t, info.Counts[t])
	}
}
