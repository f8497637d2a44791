package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/transfer"
	"github.com/cairnkg/cairn/vector/embed"
)

func exportCommand() *command {
	return &command{
		name:    "export",
		summary: "write one user's (or every user's) data as JSON Lines, with its history",
		usage:   "export [--user name] [--out file] [--vectors] [--with-consent] [--with-audit] [flags]",
		help: `
Writes a versioned JSON Lines export (docs/export.md): schema versions
with their recommendations and settings, sources, observations, entities
with their merges and identifiers, every period of every relationship with
its observations, timeline events, raw fragments, stored files with their
bytes, memories (--vectors: with their embeddings), the profile and its
history, contradictions. --with-consent adds agents and consent rules,
--with-audit the audit log. API keys never. Without --user every user is
exported, and the global schemas too. It may run while cairn serve runs:
the graph is read in one read transaction.`,
		env: append(commonEnv[:len(commonEnv):len(commonEnv)], envVar{"blob-url", "CAIRN_BLOB_URL"}),
		setup: func(fs *flag.FlagSet) runFunc {
			var common commonFlags
			common.register(fs)
			blobURL := fs.String("blob-url", "", "bucket of stored files, as serve's --blob-url; default <data-dir>/blobs on the embedded store")
			user := fs.String("user", "", "export only this user (default: every user)")
			out := fs.String("out", "", "write to this file (default: stdout)")
			vectors := fs.Bool("vectors", false, "include each memory's embedding")
			withConsent := fs.Bool("with-consent", false, "include agents and consent rules")
			withAudit := fs.Bool("with-audit", false, "include the audit log")
			return func(ctx context.Context, env *environment) error {
				if fs.NArg() > 0 {
					return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
				}
				log, err := common.logger(env.stderr)
				if err != nil {
					return err
				}
				if common.databaseURL == "" {
					if err := requireStore(common.dataDir); err != nil {
						return err
					}
				}
				cfg := common.appConfig()
				cfg.files.blobURL = *blobURL
				a, err := openApp(ctx, cfg, log)
				if err != nil {
					return err
				}
				defer a.Close()
				users, err := a.control.ListUsers(ctx)
				if err != nil {
					return err
				}
				if *user != "" {
					users = slices.DeleteFunc(users, func(u consent.User) bool { return u.Name != *user })
					if len(users) == 0 {
						return fmt.Errorf("export: no user %q", *user)
					}
				}
				w := env.stdout
				if *out != "" {
					f, err := os.Create(*out)
					if err != nil {
						return err
					}
					defer f.Close()
					w = f
				}
				p := newTransferProgress(env.stderr, "export")
				counts, err := transfer.Export(ctx, transfer.Stores{Graph: a.graph, Control: a.control, Memories: a.memories, Bucket: a.bucket}, w,
					transfer.ExportOptions{Users: users, CairnVersion: version(), Vectors: *vectors, Consent: *withConsent, GlobalSchemas: *user == "",
						Audit: *withAudit, Progress: func(_ string, lines int) { p.update(fmt.Sprintf("%d lines", lines)) }})
				p.done()
				if err != nil {
					return err
				}
				if f, ok := w.(*os.File); ok && *out != "" {
					if err := f.Sync(); err != nil {
						return err
					}
				}
				fmt.Fprintf(env.stderr, "export: %s\n", countsText(counts))
				return nil
			}
		},
	}
}

// isExportFile reports whether path is an export (its first line is an
// export header), so that cairn import tells an export from documents.
func isExportFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = transfer.ReadHeader(bufio.NewReader(io.LimitReader(f, 1<<20)))
	return err == nil
}

// exportImportFlags choose what cairn import takes from an export beyond
// the user's data: agents, consent rules and the audit log are imported
// only when asked for.
type exportImportFlags struct {
	withAgents, withConsent, withAudit bool
}

func (f *exportImportFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.withAgents, "with-agents", false, "import the export's agents (never over an agent this store holds)")
	fs.BoolVar(&f.withConsent, "with-consent", false, "import the consent rules of the agents this import creates (needs --with-agents)")
	fs.BoolVar(&f.withAudit, "with-audit", false, "import the export's audit log")
}

// importExport reads the export at path ("-": standard input) into the
// configured store: what cairn import runs for a file whose first line is
// an export header.
func importExport(ctx context.Context, env *environment, a *app, embedder embed.Embedder, path string, flags exportImportFlags, maxFieldBytes int) error {
	var r io.Reader = env.stdin
	size := int64(0)
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
		r = f
	}
	p := newTransferProgress(env.stderr, "import")
	stats, err := transfer.Import(ctx, transfer.Stores{Graph: a.graph, Control: a.control, Memories: a.memories, Bucket: a.bucket}, r,
		transfer.ImportOptions{Embedder: embedder, MaxFieldBytes: maxFieldBytes, Eraser: a.knowledge,
			Agents: flags.withAgents, Consent: flags.withConsent, Audit: flags.withAudit,
			Progress: func(read int64, lines int) {
				if size > 0 {
					p.update(fmt.Sprintf("%3.0f%% %d lines", 100*float64(read)/float64(size), lines))
				} else {
					p.update(fmt.Sprintf("%d lines", lines))
				}
			}})
	p.done()
	printImportStats(env.stdout, stats)
	if err != nil {
		return err
	}
	if stats.Checksum == transfer.ChecksumMismatch {
		return errors.New("import: the file's SHA-256 is not the one its end line holds: it was changed after export (every line was checked as above all the same)")
	}
	return nil
}

// printImportStats says what an import read, wrote and skipped, and why
// it refused the lines it refused.
func printImportStats(w io.Writer, stats transfer.Stats) {
	if stats.Read == nil {
		return
	}
	fmt.Fprintf(w, "read:    %s\nwritten: %s\n", countsText(stats.Read), countsText(stats.Written))
	for _, why := range []struct{ reason, text string }{
		{transfer.SkipHeld, "skipped, already held"},
		{transfer.SkipInvalid, "refused, invalid"},
		{transfer.SkipNotAsked, "skipped, not asked for (--with-agents, --with-consent, --with-audit)"},
		{transfer.SkipErased, "skipped, erased in this store"},
		{transfer.SkipRetracted, "skipped, retracted in this store"},
	} {
		if counts := stats.Skipped[why.reason]; len(counts) > 0 {
			fmt.Fprintf(w, "%s: %s\n", why.text, nonZeroCounts(counts))
		}
	}
	for _, r := range stats.Refused {
		fmt.Fprintf(w, "refused %s\n", r)
	}
	if n := total(stats.Skipped[transfer.SkipInvalid]); n > len(stats.Refused) {
		fmt.Fprintf(w, "… and %d more refused lines\n", n-len(stats.Refused))
	}
	if len(stats.Erased) > 0 {
		// What the export's tombstones said was erased and this store
		// still held, counted as erase counts it.
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(stats.Erased)) {
			parts = append(parts, fmt.Sprintf("%d %s", stats.Erased[k], k))
		}
		fmt.Fprintf(w, "erased, as the export's tombstones say: %s\n", strings.Join(parts, ", "))
	}
	if stats.Embedded > 0 {
		fmt.Fprintf(w, "%d memories embedded with this store's embedder\n", stats.Embedded)
	}
	switch stats.Checksum {
	case transfer.ChecksumVerified:
		fmt.Fprintln(w, "checksum: verified (the file is the one exported, unless someone computed the sum again)")
	case transfer.ChecksumAbsent:
		fmt.Fprintln(w, "checksum: absent (an export of an older cairn)")
	case transfer.ChecksumMismatch:
		fmt.Fprintln(w, "checksum: MISMATCH: the file was changed after export")
	}
}

// nonZeroCounts says the counts that are not zero: the kinds of
// countKinds in their order, then any other (memory_tombstone,
// memory_version) by name.
func nonZeroCounts(counts map[string]int) string {
	var parts []string
	for _, k := range countKinds {
		if counts[k] != 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		if counts[k] != 0 && !slices.Contains(countKinds, k) {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	return strings.Join(parts, ", ")
}

func total(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

func importCommand() *command {
	return &command{
		name:    "import",
		summary: "read a cairn export, or store and interpret files, into the configured store, idempotently",
		usage:   "import EXPORT|- | FILE…|DIR [flags]",
		help: `
With one file whose first line is an export header, or - for an export on
standard input: reads an export written by cairn export (docs/export.md)
into the store these flags configure, embedded, PostgreSQL or Neo4j. Ids
are kept; a user whose name or id belongs to another user of this store is
refused. An export line never changes what the store holds: entities,
observations, relationships and rows it holds already are left alone (and
counted as skipped), so running it twice changes nothing. A tombstone (a
memory, entity or source the exporting store erased) is the exception: the
import records it and erases what this store still holds of it, as erase
does, and says what it erased (docs/forgetting.md). Every value is
checked as a tool call checks it (ids, type names, --max-field-bytes); a
new entity is written only if its snapshot agrees with its observations;
a line that fails is refused, with its line number, and the rest goes on.
Agents, consent rules and the audit log are imported only with
--with-agents, --with-consent (rules of agents this import creates) and
--with-audit. Memories whose vectors are missing or of another embedder
are embedded with this store's embedder; entity embeddings are rebuilt by
the outbox. An export with files needs a file bucket (--blob-url on
PostgreSQL): without one it fails before writing anything.

Otherwise: stores the files (directories are walked, hidden files skipped)
for the owner, queues their interpretation, runs the jobs and waits for
them, with a progress bar on a terminal and plain lines otherwise
(docs/files.md). Files stored before are deduplicated and not queued again,
so after an interruption the same command carries on where it stopped.`,
		env: append(append(append(commonEnv[:len(commonEnv):len(commonEnv)], embedEnv...), fileEnv...), fieldEnv...),
		setup: func(fs *flag.FlagSet) runFunc {
			var common commonFlags
			common.register(fs)
			var emb embedFlags
			emb.register(fs)
			var fileImp fileImportFlags
			fileImp.register(fs)
			var fieldF fieldFlags
			fieldF.register(fs)
			var expImp exportImportFlags
			expImp.register(fs)
			return func(ctx context.Context, env *environment) error {
				if fs.NArg() == 0 {
					return usageError{"import takes an export file (- for standard input), or files and directories to store"}
				}
				if expImp.withConsent && !expImp.withAgents {
					return usageError{"--with-consent imports the rules of the agents the import creates: add --with-agents"}
				}
				path := fs.Arg(0)
				if fs.NArg() > 1 || (path != "-" && !isExportFile(path)) {
					cfg := common.appConfig()
					if err := fieldF.apply(&cfg); err != nil {
						return err
					}
					embedder, err := emb.open(ctx, env.getenv, slog.New(slog.DiscardHandler))
					if err != nil {
						return err
					}
					cfg.embedder = embedder
					return importFiles(ctx, env, cfg, &fileImp, fs.Args())
				}
				log, err := common.logger(env.stderr)
				if err != nil {
					return err
				}
				cfg := common.appConfig()
				if err := fieldF.apply(&cfg); err != nil {
					return err
				}
				embedder, err := emb.open(ctx, env.getenv, log)
				if err != nil {
					return err
				}
				cfg.embedder = embedder
				if err := fileImp.files.apply(&cfg, env.getenv); err != nil {
					return err
				}
				a, err := openApp(ctx, cfg, log)
				if err != nil {
					return err
				}
				defer a.Close()
				return importExport(ctx, env, a, embedder.Embedder, path, expImp, fieldF.maxFieldBytes)
			}
		},
	}
}

// transferProgress shows progress on stderr: one line rewritten in place
// on a terminal, a plain line every few seconds otherwise.
type transferProgress struct {
	w       io.Writer
	what    string
	tty     bool
	printed time.Time
	last    string
	shown   string // what the last line printed said
}

func newTransferProgress(w io.Writer, what string) *transferProgress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil {
			tty = st.Mode()&os.ModeCharDevice != 0
		}
	}
	return &transferProgress{w: w, what: what, tty: tty}
}

func (p *transferProgress) update(s string) {
	p.last = s
	every := 5 * time.Second
	if p.tty {
		every = 100 * time.Millisecond
	}
	if now := time.Now(); now.Sub(p.printed) >= every {
		p.printed, p.shown = now, s
		if p.tty {
			fmt.Fprintf(p.w, "\r%s: %s", p.what, s)
		} else {
			fmt.Fprintf(p.w, "%s: %s\n", p.what, s)
		}
	}
}

// done ends the progress with where it got to: on a terminal the line is
// finished; elsewhere the final count is printed unless the last line
// already said it.
func (p *transferProgress) done() {
	switch {
	case p.tty && !p.printed.IsZero():
		fmt.Fprintf(p.w, "\r%s: %s\n", p.what, p.last)
	case !p.tty && p.last != "" && p.last != p.shown:
		fmt.Fprintf(p.w, "%s: %s\n", p.what, p.last)
	}
}

// countKinds are the kinds of line in the order counts are printed.
var countKinds = []string{transfer.KindUser, transfer.KindSchema, transfer.KindSource, transfer.KindEntity, transfer.KindObservation,
	transfer.KindTimeline, transfer.KindRawFragment, transfer.KindRelationship, transfer.KindRelationshipObservation,
	transfer.KindBlob, transfer.KindFile, transfer.KindMemory, transfer.KindRow, transfer.KindAudit}

func countsText(counts map[string]int) string {
	var parts []string
	for _, k := range countKinds {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	return strings.Join(parts, ", ")
}
