package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/db/postgres"
	"github.com/cairnkg/cairn/db/sqlite"
	"github.com/cairnkg/cairn/migrations"
)

const adminUsage = `admin user create NAME | user list
       cairn admin agent create [--user NAME] AGENT | agent list [--user NAME]
       cairn admin key create [--user NAME] --agent AGENT [--expires DURATION]
       cairn admin key list [--user NAME] [--agent AGENT] | key revoke KEY_ID
       cairn admin consent allow|deny [--user NAME] --agent AGENT --resource PATTERN --action read|write|delete
       cairn admin consent list [--user NAME] [--agent AGENT] | consent remove [--user NAME] RULE_ID
       cairn admin audit [--user NAME] [--agent AGENT] [--tool TOOL] [--decision allow|deny] [--since WHEN] [--limit N] [--json]
       cairn admin schema list [--user NAME] | schema register [--user NAME] [--inactive] FILE
       cairn admin schema activate [--user NAME] TYPE VERSION | schema auto-enhance [--user NAME] on|off
       cairn admin erase [--user NAME] --entity IDS | --source IDS [--reason TEXT] [--dry-run]
       cairn admin erase --user NAME [--reason TEXT] [--dry-run] | erasures [--limit N]`

func adminCommand() *command {
	return &command{
		name:    "admin",
		summary: "manage users, agents, API keys, consent rules; read the audit log",
		usage:   adminUsage,
		help: `
Manage the control plane: users, their agents, API keys, consent rules, and
read the audit log. It works on the embedded store in --data-dir, or on
PostgreSQL with --database-url (or CAIRN_DATABASE_URL), including while
cairn serve runs on the same store. It never creates an embedded store:
where --data-dir holds none, it says so and exits 1.

Every command acts for --user (default: the owner). A key is shown once,
alone on the last line of key create's output; Cairn keeps only its hash.
Durations accept Go's units and days: 90m, 12h, 30d.

Consent rules: PATTERN is *, profile, graph, schema, sources, audit,
entities/<type> (or tables/<type>), memories/<collection> (or
vectors/<collection>); a name may end in *. The most specific rule wins,
deny wins ties, and no rule means deny. The owner agent always has full
access.

Schemas: schema list shows the schemas a user's data follows (the user's
own, else the global one, else the built-in one). schema register stores a
global schema version from a JSON file ({"entity_type", "version",
"description", "fields": {name: {"type", "required", "description",
"identifier", "event_type", "merge_policy"}}, "identity_fields",
"name_fields", "relationship_types": [{"name", "acyclic"}]}), active unless
--inactive; with --user it is that user's own. schema activate makes a stored
version the active one. schema auto-enhance switches a user's
auto-enhancement (fields promoted from raw fragments; on by default).

Flags of the subcommands (anywhere after the subcommand):
  --user NAME          act for this user (default: the owner)
  --agent NAME         the agent (key create, consent allow|deny: required)
  --expires DURATION   key create: lifetime (default: never)
  --resource PATTERN   consent allow|deny: the resource pattern
  --action read|write|delete  consent allow|deny: the action
  --tool, --decision allow|deny, --since WHEN, --limit N, --json   audit filters
                       (audit --user also takes the id of an erased user)
  --inactive           schema register: store the version without activating it
  --entity ID[,ID…], --source ID[,ID…], --reason TEXT, --dry-run   erase
  --blob-url URL       erase: the bucket of stored files, as serve's (default <data-dir>/blobs)

Erase (docs/forgetting.md): admin erase --entity IDS or --source IDS removes
those entities with everything derived from them, or those sources with
everything they produced, of --user (default: the owner), leaving
tombstones. admin erase --user NAME alone erases all of that user's data
in every store, the user record last: first their keys and OAuth tokens
stop working and their jobs are cancelled, then entities and sources (100
at a time, with progress on stderr), memories and collections, files, and
last their profile, agents, consent rules, schemas and the user. It runs
as a job: a run that stops (a crash, Ctrl-C) is resumed where it stopped by
running the same command again. admin erasures lists the erasures of
users, running or done. --dry-run changes nothing and lists what would go.
Each erasure is recorded in the audit log, which is kept (it holds no
content). It opens the whole
store (as cairn serve would: --neo4j-uri for a split deployment).`,
		env: append(commonEnv[:len(commonEnv):len(commonEnv)], envVar{"blob-url", "CAIRN_BLOB_URL"}),
		setup: func(fs *flag.FlagSet) runFunc {
			// The common flags may come before the subcommand too: cairn
			// admin --data-dir d key list.
			var top adminFlags
			top.registerStores(fs)
			return func(ctx context.Context, env *environment) error {
				return runAdmin(ctx, env, fs.Args(), fs)
			}
		},
	}
}

// adminFlags are the flags every admin command accepts, and the ones some
// do.
type adminFlags struct {
	common   commonFlags
	user     string
	agent    string
	expires  string
	resource string
	action   string
	tool     string
	decision string
	since    string
	limit    int
	asJSON   bool
	inactive bool
	// erase
	blobURL string
	entity  string
	source  string
	reason  string
	dryRun  bool
}

// registerStores registers the flags that select the stores: the common
// ones and the file bucket (erase removes files' bytes).
func (f *adminFlags) registerStores(fs *flag.FlagSet) {
	f.common.register(fs)
	fs.StringVar(&f.blobURL, "blob-url", "", "erase: bucket of stored files, as serve's --blob-url; default <data-dir>/blobs on the embedded store")
}

// runAdmin parses `admin <noun> <verb> …` and runs it; top holds the flags
// given before the subcommand, with the environment applied.
func runAdmin(ctx context.Context, env *environment, args []string, top *flag.FlagSet) error {
	if len(args) == 0 {
		return usageError{"admin needs a command: user, agent, key, consent, audit, schema, erase or erasures (see cairn admin --help)"}
	}
	noun, rest := args[0], args[1:]
	verb := ""
	if noun != "audit" && noun != "erase" && noun != "erasures" {
		if len(rest) == 0 {
			return usageError{fmt.Sprintf("admin %s needs a subcommand (see cairn admin --help)", noun)}
		}
		verb, rest = rest[0], rest[1:]
	}
	var f adminFlags
	fs := flag.NewFlagSet("cairn admin", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.registerStores(fs)
	fs.StringVar(&f.user, "user", "", "the user to act for (default: the owner)")
	fs.StringVar(&f.agent, "agent", "", "the agent")
	fs.StringVar(&f.expires, "expires", "", "key lifetime, e.g. 30d or 12h (default: never)")
	fs.StringVar(&f.resource, "resource", "", "consent resource pattern")
	fs.StringVar(&f.action, "action", "", "read, write or delete")
	fs.StringVar(&f.tool, "tool", "", "audit: only this tool")
	fs.StringVar(&f.decision, "decision", "", "audit: allow or deny")
	fs.StringVar(&f.since, "since", "", "audit: records since a duration ago (1h, 7d) or an RFC 3339 time")
	fs.IntVar(&f.limit, "limit", 50, "audit, erasures: most records")
	fs.BoolVar(&f.asJSON, "json", false, "audit: one JSON object per line")
	fs.BoolVar(&f.inactive, "inactive", false, "schema register: do not activate the version")
	fs.StringVar(&f.entity, "entity", "", "erase: entity ids, comma-separated")
	fs.StringVar(&f.source, "source", "", "erase: source ids, comma-separated")
	fs.StringVar(&f.reason, "reason", "", "erase: why, kept in the tombstones")
	fs.BoolVar(&f.dryRun, "dry-run", false, "erase: say what would go, change nothing")
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return usageError{fmt.Sprintf("admin %s %s: %v", noun, verb, err)}
	}
	// Store flags not given after the subcommand keep their value from
	// before it, which already has the environment applied.
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	var bad error
	top.VisitAll(func(fl *flag.Flag) {
		if !given[fl.Name] && bad == nil {
			bad = fs.Set(fl.Name, fl.Value.String())
		}
	})
	if bad != nil {
		return bad
	}
	log, err := f.common.logger(env.stderr)
	if err != nil {
		return err
	}
	store, closeStore, err := openControlPlane(ctx, f.common.dataDir, f.common.databaseURL)
	if err != nil {
		return err
	}
	defer closeStore()
	a := &admin{store: store, out: env.stdout, errw: env.stderr, f: f, pos: pos}
	switch noun + " " + verb {
	case "user create":
		return a.userCreate(ctx)
	case "user list":
		return a.userList(ctx)
	case "agent create":
		return a.agentCreate(ctx)
	case "agent list":
		return a.agentList(ctx)
	case "key create":
		return a.keyCreate(ctx)
	case "key list":
		return a.keyList(ctx)
	case "key revoke":
		return a.keyRevoke(ctx)
	case "consent allow", "consent deny":
		return a.consentSet(ctx, consent.Effect(verb))
	case "consent list":
		return a.consentList(ctx)
	case "consent remove":
		return a.consentRemove(ctx)
	case "audit ":
		return a.audit(ctx)
	case "erase ":
		return a.erase(ctx, log)
	case "erasures ":
		return a.erasures(ctx)
	case "schema list":
		return a.schemaList(ctx)
	case "schema register":
		return a.schemaRegister(ctx)
	case "schema activate":
		return a.schemaActivate(ctx)
	case "schema auto-enhance":
		return a.schemaAutoEnhance(ctx)
	}
	return usageError{fmt.Sprintf("unknown admin command %q (see cairn admin --help)", strings.TrimSpace(noun+" "+verb))}
}

// parseInterspersed parses flags wherever they appear among the positional
// arguments, so that `agent create claude --user bob` works like `agent
// create --user bob claude`.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// openControlPlane opens the control plane alone: PostgreSQL when url is
// set, otherwise the embedded store in dataDir (which may be in use by a
// running serve: SQLite in WAL mode serialises the writes).
func openControlPlane(ctx context.Context, dataDir, url string) (*controlplane.Store, func(), error) {
	if url != "" {
		db, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			return nil, nil, err
		}
		return controlplane.New(db.SQL, migrations.Postgres), func() { db.Close() }, nil
	}
	if err := requireStore(dataDir); err != nil {
		return nil, nil, err
	}
	db, err := sqlite.Open(ctx, dataDir)
	if err != nil {
		return nil, nil, err
	}
	return controlplane.New(db.Write, migrations.SQLite), func() { db.Close() }, nil
}

type admin struct {
	store *controlplane.Store
	out   io.Writer
	errw  io.Writer // progress
	f     adminFlags
	pos   []string
}

// arg returns the one positional argument a command takes.
func (a *admin) arg(what string) (string, error) {
	if len(a.pos) != 1 {
		return "", usageError{fmt.Sprintf("expected one %s, got %d arguments", what, len(a.pos))}
	}
	return a.pos[0], nil
}

func (a *admin) noArgs() error {
	if len(a.pos) > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", a.pos[0])}
	}
	return nil
}

// user returns --user, or the owner.
func (a *admin) user(ctx context.Context) (consent.User, error) {
	if a.f.user == "" {
		return a.store.Owner(ctx)
	}
	return a.store.UserByName(ctx, a.f.user)
}

// agent returns --agent of the user, which is required.
func (a *admin) agent(ctx context.Context, u consent.User) (consent.Agent, error) {
	if a.f.agent == "" {
		return consent.Agent{}, usageError{"--agent is required"}
	}
	ag, err := a.store.AgentByName(ctx, u.ID, a.f.agent)
	if errors.Is(err, controlplane.ErrNotFound) {
		return ag, fmt.Errorf("user %s has no agent %q (create it with cairn admin agent create --user %s %s)", u.Name, a.f.agent, u.Name, a.f.agent)
	}
	return ag, err
}

func (a *admin) table(header string, rows func(w io.Writer)) {
	w := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, header)
	rows(w)
	w.Flush()
}

func (a *admin) userCreate(ctx context.Context) error {
	name, err := a.arg("user name")
	if err != nil {
		return err
	}
	u, err := a.store.CreateUser(ctx, name)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "created user %s (%s)\n", u.Name, u.ID)
	return nil
}

func (a *admin) userList(ctx context.Context) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	users, err := a.store.ListUsers(ctx)
	if err != nil {
		return err
	}
	a.table("NAME\tID\tOWNER", func(w io.Writer) {
		for _, u := range users {
			fmt.Fprintf(w, "%s\t%s\t%v\n", u.Name, u.ID, u.IsOwner)
		}
	})
	return nil
}

func (a *admin) agentCreate(ctx context.Context) error {
	name, err := a.arg("agent name")
	if err != nil {
		return err
	}
	u, err := a.user(ctx)
	if err != nil {
		return err
	}
	ag, err := a.store.CreateAgent(ctx, u.ID, name)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "created agent %s of user %s (%s); it may do nothing until consent rules allow it\n", ag.Name, u.Name, ag.ID)
	return nil
}

func (a *admin) agentList(ctx context.Context) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	u, err := a.user(ctx)
	if err != nil {
		return err
	}
	agents, err := a.store.ListAgents(ctx, u.ID)
	if err != nil {
		return err
	}
	a.table("AGENT\tID", func(w io.Writer) {
		for _, ag := range agents {
			fmt.Fprintf(w, "%s\t%s\n", ag.Name, ag.ID)
		}
	})
	return nil
}

func (a *admin) keyCreate(ctx context.Context) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	u, err := a.user(ctx)
	if err != nil {
		return err
	}
	ag, err := a.agent(ctx, u)
	if err != nil {
		return err
	}
	var expires time.Time
	if a.f.expires != "" {
		d, err := parseDuration(a.f.expires)
		if err != nil || d <= 0 {
			return usageError{fmt.Sprintf("--expires %q: give a positive duration such as 30d, 12h or 90m", a.f.expires)}
		}
		expires = time.Now().Add(d).UTC().Truncate(time.Second)
	}
	key, k, err := a.store.CreateKey(ctx, u.ID, ag.ID, expires)
	if err != nil {
		return err
	}
	exp := "never expires"
	if !expires.IsZero() {
		exp = "expires " + expires.Format(time.RFC3339)
	}
	fmt.Fprintf(a.out, "created key %s for agent %s of user %s; it %s.\nThis is the key. It is shown only now; Cairn keeps only its hash:\n%s\n", k.ID, ag.Name, u.Name, exp, key)
	return nil
}

func (a *admin) keyList(ctx context.Context) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	u, err := a.user(ctx)
	if err != nil {
		return err
	}
	f := controlplane.KeyFilter{UserID: u.ID}
	if a.f.agent != "" {
		ag, err := a.agent(ctx, u)
		if err != nil {
			return err
		}
		f.AgentID = ag.ID
	}
	keys, err := a.store.ListKeys(ctx, f)
	if err != nil {
		return err
	}
	now := time.Now()
	a.table("ID\tAGENT\tPREFIX\tSTATUS\tCREATED\tEXPIRES\tLAST USED", func(w io.Writer) {
		for _, k := range keys {
			status := "active"
			switch {
			case !k.RevokedAt.IsZero():
				status = "revoked"
			case !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt):
				status = "expired"
			}
			fmt.Fprintf(w, "%s\t%s\t%s…\t%s\t%s\t%s\t%s\n", k.ID, k.AgentName, k.Prefix, status, when(k.CreatedAt), when(k.ExpiresAt), when(k.LastUsedAt))
		}
	})
	return nil
}

func (a *admin) keyRevoke(ctx context.Context) error {
	id, err := a.arg("key id")
	if err != nil {
		return err
	}
	if err := a.store.RevokeKey(ctx, id); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "revoked key %s\n", id)
	return nil
}

func (a *admin) consentSet(ctx context.Context, effect consent.Effect) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	if a.f.resource == "" || a.f.action == "" {
		return usageError{"--resource and --action are required"}
	}
	u, err := a.user(ctx)
	if err != nil {
		return err
	}
	ag, err := a.agent(ctx, u)
	if err != nil {
		return err
	}
	r, err := a.store.SetRule(ctx, consent.Rule{UserID: u.ID, AgentID: ag.ID, Pattern: a.f.resource, Action: consent.Action(a.f.action), Effect: effect})
	if errors.Is(err, consent.ErrInvalidRule) {
		return usageError{err.Error()}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "rule %s: %s %s %s on %s\n", r.ID, effect, ag.Name, r.Action, r.Pattern)
	return nil
}

func (a *admin) consentList(ctx context.Context) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	u, err := a.user(ctx)
	if err != nil {
		return err
	}
	agentID := ""
	if a.f.agent != "" {
		ag, err := a.agent(ctx, u)
		if err != nil {
			return err
		}
		agentID = ag.ID
	}
	rules, err := a.store.ListRules(ctx, u.ID, agentID)
	if err != nil {
		return err
	}
	a.table("ID\tAGENT\tRESOURCE\tACTION\tEFFECT", func(w io.Writer) {
		for _, r := range rules {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.AgentName, r.Pattern, r.Action, r.Effect)
		}
	})
	return nil
}

func (a *admin) consentRemove(ctx context.Context) error {
	id, err := a.arg("rule id")
	if err != nil {
		return err
	}
	u, err := a.user(ctx)
	if err != nil {
		return err
	}
	if err := a.store.DeleteRule(ctx, u.ID, id); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "removed rule %s\n", id)
	return nil
}

func (a *admin) audit(ctx context.Context) error {
	if err := a.noArgs(); err != nil {
		return err
	}
	u, err := a.user(ctx)
	if errors.Is(err, controlplane.ErrNotFound) {
		// An erased user's records stay: --user takes the user's id, which
		// cairn admin erasures lists.
		if erased, eerr := a.store.ErasedUser(ctx, a.f.user); eerr == nil && erased {
			u, err = consent.User{ID: a.f.user}, nil
		}
	}
	if err != nil {
		return err
	}
	q := consent.AuditQuery{UserID: u.ID, AgentName: a.f.agent, Tool: a.f.tool, Limit: a.f.limit}
	if a.f.decision != "" {
		if q.Decision, err = consent.ParseEffect(a.f.decision); err != nil {
			return usageError{"--decision must be allow or deny"}
		}
	}
	if a.f.since != "" {
		if d, err := parseDuration(a.f.since); err == nil {
			q.Since = time.Now().Add(-d)
		} else if q.Since, err = time.Parse(time.RFC3339, a.f.since); err != nil {
			return usageError{fmt.Sprintf("--since %q: give a duration (1h, 7d) or an RFC 3339 time", a.f.since)}
		}
	}
	if q.Limit <= 0 || q.Limit > 10000 {
		return usageError{"--limit must be 1 to 10000"}
	}
	recs, err := a.store.QueryAudit(ctx, q)
	if err != nil {
		return err
	}
	if a.f.asJSON {
		enc := json.NewEncoder(a.out)
		for _, r := range recs {
			if err := enc.Encode(map[string]any{"id": r.ID, "at": r.At.Format(time.RFC3339Nano), "agent": r.AgentName, "key_id": r.KeyID,
				"transport": r.Transport, "tool": r.Tool, "kind": r.Kind, "action": r.Action, "resource": r.Resource,
				"decision": r.Decision, "result_code": r.ResultCode, "latency_ms": r.Latency.Milliseconds(), "request_id": r.RequestID}); err != nil {
				return err
			}
		}
		return nil
	}
	a.table("AT\tAGENT\tTOOL\tKIND\tACTION\tRESOURCE\tDECISION\tRESULT\tMS\tREQUEST", func(w io.Writer) {
		for _, r := range recs {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.At.Format(time.RFC3339), r.AgentName, r.Tool, r.Kind,
				dash(string(r.Action)), dash(r.Resource), r.Decision, r.ResultCode, r.Latency.Milliseconds(), r.RequestID)
		}
	})
	return nil
}

// parseDuration is time.ParseDuration with days: "30d".
func parseDuration(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 36500 {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
