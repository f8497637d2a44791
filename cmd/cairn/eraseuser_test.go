package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/cairnkg/cairn/controlplane"
	"github.com/cairnkg/cairn/db/postgres/pgtest"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/graph/neo4j/neo4jtest"
	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/vector"

	_ "modernc.org/sqlite"
)

// leftByErasure are the tables whose rows of an erased user stay, and why:
// tombstones and the erasure's own record are what an erasure leaves (ids,
// times, actor, reason); audit_callers is the audit log's dictionary of
// callers, kept with the log; graph_changes and graph_outbox hold ids of
// changed entities for subscribers and the entity-embedding worker, which
// consume them (no content).
var leftByErasure = []string{"graph_tombstones", "memory_tombstones", "user_erasures", "audit_callers", "graph_changes", "graph_outbox"}

// TestAdminEraseUser is the proof of issue 37 for a data-protection
// request: a user whose data holds a marker in every kind of it (entity
// fields, identifiers, raw fields, a type of their own, a relationship's
// metadata, memories live and retracted, the profile, a file interpreted
// and one not) is erased with cairn admin erase --user while serve runs on
// the store. A dry run first counts and changes nothing. Afterwards: the
// user's key no longer works, the user is not listed, no byte of the
// embedded store's files or the blob folder and no row of any PostgreSQL
// table (nor any Neo4j node or relationship) holds the marker, no table
// holds a row of the user but what an erasure leaves, the erasure is done
// in cairn admin erasures and audited without content, and the owner's
// data is untouched.
func TestAdminEraseUser(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	forEachBackend(t, func(t *testing.T, dataDir string, env []string) {
		bucket := filepath.Join(t.TempDir(), "bucket")
		env = append(env, "CAIRN_BLOB_URL=file://"+bucket+"?create_dir=true&no_tmp_dir=true", "CAIRN_RATE_LIMIT_UPLOAD=0", "CAIRN_TOOLSETS=all")
		url := startServe(t, dataDir, env...)
		owner := connectHTTP(t, url)
		admin := func(fail bool, args ...string) string {
			t.Helper()
			return cairnAdmin(t, env, fail, append(args, "--data-dir", dataDir)...)
		}
		marker := "zqe" + strings.TrimPrefix(vector.NewID(), "mem_")[:12] + "q"
		dana, key, danaID := newUserWithAgent(t, url, admin, "dana")
		olga := storeEntity(t, owner, map[string]any{"entity_type": "person", "name": "Olga Owner"})
		plantMarker(t, dana, marker)
		if !storeHolds(t, dataDir, bucket, env, marker) {
			t.Fatal("before the erasure the store does not hold the marker: the test proves nothing")
		}

		out := admin(false, "erase", "--user", "dana", "--dry-run")
		for _, want := range []string{"would erase user dana", "entities", "memories", "files", "users"} {
			if !strings.Contains(out, want) {
				t.Errorf("dry run printed %q, want %q in it", out, want)
			}
		}
		callTool(t, dana, "retrieve_entities", map[string]any{"query": marker})
		if !storeHolds(t, dataDir, bucket, env, marker) {
			t.Fatal("the dry run erased something")
		}

		out = admin(false, "erase", "--user", "dana", "--reason", "request 7")
		if !strings.Contains(out, "erased user dana") || !strings.Contains(out, "users") {
			t.Errorf("erase --user printed %q", out)
		}
		t.Logf("erase --user:\n%s", out)
		if code := statusWithKey(t, url, key); code != http.StatusUnauthorized {
			t.Errorf("dana's key after the erasure: HTTP %d, want 401", code)
		}
		if users := admin(false, "user", "list"); strings.Contains(users, "dana") {
			t.Errorf("dana is still listed:\n%s", users)
		}
		if storeHolds(t, dataDir, bucket, env, marker) {
			t.Error("the store still holds the marker after the erasure")
		}
		if left := userRows(t, dataDir, env, danaID); len(left) > 0 {
			t.Errorf("rows of the erased user left: %v", left)
		}
		erasures := admin(false, "erasures")
		if !strings.Contains(erasures, danaID) || !strings.Contains(erasures, "done") || strings.Contains(erasures, marker) {
			t.Errorf("erasures:\n%s", erasures)
		}
		audit := admin(false, "audit", "--user", danaID, "--tool", "admin erase", "--json")
		if !strings.Contains(audit, `"resource":"*"`) || strings.Contains(audit, marker) || strings.Contains(audit, "request 7") {
			t.Errorf("audit of the erasure:\n%s", audit)
		}
		callTool(t, owner, "retrieve_entity_snapshot", map[string]any{"entity_id": olga})
		if msg := admin(true, "erase", "--user", "dana"); !strings.Contains(msg, "dana") {
			t.Errorf("erasing the erased user again: %s", msg)
		}
	})
}

// TestAdminEraseUserResumes kills an erasure of a user with SIGKILL after
// its first batch of entities and checks that the erasure is recorded as
// running at that step, that running the command again resumes it (not a
// new one) and finishes it, with nothing of the user left.
func TestAdminEraseUserResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dataDir := filepath.Join(t.TempDir(), "data")
	env := []string{"CAIRN_DATABASE_URL="}
	url := startServe(t, dataDir, env...)
	admin := func(fail bool, args ...string) string {
		t.Helper()
		return cairnAdmin(t, env, fail, append(args, "--data-dir", dataDir)...)
	}
	dana, _, danaID := newUserWithAgent(t, url, admin, "dana")
	for i := range 3 {
		var ents []any
		for j := range 100 {
			ents = append(ents, map[string]any{"entity_type": "person", "name": fmt.Sprintf("Person %d-%d", i, j)})
		}
		callTool(t, dana, "store", map[string]any{"entities": ents})
	}
	callTool(t, dana, "save_memory", map[string]any{"collection": "notes", "text": "something to forget"})

	cmd := exec.Command(cairnBinary(t), "admin", "erase", "--user", "dana", "--data-dir", dataDir)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var seen []string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.HasPrefix(sc.Text(), "100 entities erased") {
			_ = cmd.Process.Kill()
			break
		}
	}
	_ = cmd.Wait()
	if !slices.ContainsFunc(seen, func(l string) bool { return strings.HasPrefix(l, "100 entities erased") }) {
		t.Fatalf("the erasure did not report its first batch: %q", seen)
	}
	list := admin(false, "erasures")
	if !strings.Contains(list, "running") || !strings.Contains(list, "entities") {
		t.Fatalf("after the kill, erasures:\n%s", list)
	}
	cmd = exec.Command(cairnBinary(t), "admin", "erase", "--user", "dana", "--data-dir", dataDir)
	cmd.Env = append(os.Environ(), env...)
	var outb, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outb, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("resuming: %v\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "resuming erasure") || !strings.Contains(outb.String(), "erased user dana") {
		t.Errorf("the second run did not resume:\nstdout: %s\nstderr: %s", outb.String(), errb.String())
	}
	if list := admin(false, "erasures"); strings.Count(list, danaID) != 1 || !strings.Contains(list, "done") {
		t.Errorf("after resuming, erasures:\n%s", list)
	}
	if left := userRows(t, dataDir, env, danaID); len(left) > 0 {
		t.Errorf("rows of the erased user left: %v", left)
	}
}

// newUserWithAgent creates a user with an agent that may read, write and
// delete everything, and connects as it over HTTP; it returns the session,
// the agent's key and the user's id.
func newUserWithAgent(t *testing.T, url string, admin func(bool, ...string) string, name string) (cs *mcpsdk.ClientSession, key, id string) {
	t.Helper()
	admin(false, "user", "create", name)
	for _, line := range strings.Split(admin(false, "user", "list"), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == name {
			id = f[1]
		}
	}
	if id == "" {
		t.Fatalf("user list has no %s", name)
	}
	admin(false, "agent", "create", "--user", name, "helper")
	key = lastLine(admin(false, "key", "create", "--user", name, "--agent", "helper"))
	for _, action := range []string{"read", "write", "delete"} {
		admin(false, "consent", "allow", "--user", name, "--agent", "helper", "--resource", "*", "--action", action)
	}
	return connectWithKey(t, url, key), key, id
}

// storeEntity stores one entity and returns its id.
func storeEntity(t *testing.T, cs *mcpsdk.ClientSession, ent map[string]any) string {
	t.Helper()
	out := callTool(t, cs, "store", map[string]any{"entities": []any{ent}})
	return out["entities"].([]any)[0].(map[string]any)["entity_id"].(string)
}

// plantMarker stores the marker in every kind of data a user has.
func plantMarker(t *testing.T, cs *mcpsdk.ClientSession, marker string) {
	t.Helper()
	dana := storeEntity(t, cs, map[string]any{"entity_type": "person", "name": "Dana " + marker, "email": marker + "@example.org",
		"notes": "said in confidence " + marker, "birth_date": "1980-02-03", "nickname": marker})
	storeEntity(t, cs, map[string]any{"entity_type": "diagnosis", "name": "Finding " + marker, "detail": marker})
	clinic := storeEntity(t, cs, map[string]any{"entity_type": "company", "name": "Clinic " + marker})
	callTool(t, cs, "create_relationship", map[string]any{"relationship_type": "WORKS_AT", "source_entity_id": dana, "target_entity_id": clinic,
		"metadata": map[string]any{"note": marker}})
	callTool(t, cs, "save_memory", map[string]any{"collection": "health", "title": "About " + marker, "text": "Dana told me " + marker, "tags": []string{marker}})
	gone := callTool(t, cs, "save_memory", map[string]any{"collection": "health", "text": "Retracted " + marker})
	callTool(t, cs, "delete_memory", map[string]any{"memory_ids": []string{gone["id"].(string)}, "mode": "retract", "reason": "wrong " + marker})
	callTool(t, cs, "update_profile", map[string]any{"data": map[string]any{"secret": marker}, "reason": "told " + marker})
	csv := "Date,Description,Amount,Currency,Transaction ID\n2026-01-02,Pharmacy " + marker + ",-5.25,EUR,T0001\n"
	job := callTool(t, cs, "store", map[string]any{"file_content": base64.StdEncoding.EncodeToString([]byte(csv)), "mime_type": "text/csv", "original_filename": marker + ".csv"})
	if j := waitJob(t, cs, job["job_id"].(string)); j["status"] != "succeeded" {
		t.Fatalf("interpreting the CSV: %v", j)
	}
	callTool(t, cs, "store", map[string]any{"file_content": base64.StdEncoding.EncodeToString([]byte("kept bytes " + marker)), "mime_type": "text/plain",
		"original_filename": "raw-" + marker + ".txt", "interpret": false})
}

// statusWithKey answers the HTTP status of an MCP initialize with key.
func statusWithKey(t *testing.T, url, key string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// envValue returns the value of name in env, or "".
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// storeHolds reports whether the marker is in any byte of the embedded
// store's files or the bucket's, in any row of any PostgreSQL table, or
// in any property of a Neo4j node or relationship.
func storeHolds(t *testing.T, dataDir, bucket string, env []string, marker string) bool {
	t.Helper()
	found := false
	for _, dir := range []string{dataDir, bucket} {
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(bytes.ToLower(b), []byte(marker)) {
				t.Logf("%s holds the marker", path)
				found = true
			}
			return nil
		})
	}
	if url := envValue(env, "CAIRN_DATABASE_URL"); url != "" {
		held, err := pgtest.TablesHolding(t.Context(), pgConn(t, url), marker)
		if err != nil {
			t.Fatal(err)
		}
		for table, n := range held {
			t.Logf("table %s holds the marker in %d rows", table, n)
			found = true
		}
	}
	if uri := envValue(env, "CAIRN_NEO4J_URI"); uri != "" {
		drv, err := neo4j.NewDriverWithContext(uri, neo4j.BasicAuth(envValue(env, "CAIRN_NEO4J_USER"), envValue(env, "CAIRN_NEO4J_PASSWORD"), ""))
		if err != nil {
			t.Fatal(err)
		}
		defer drv.Close(context.Background())
		n, err := neo4jtest.Holds(t.Context(), drv, envValue(env, "CAIRN_NEO4J_DATABASE"), marker)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			t.Logf("Neo4j holds the marker in %d nodes or relationships", n)
			found = true
		}
	}
	return found
}

func pgConn(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// userRows returns, by table, how many rows of the user's any table with a
// user_id or owner_id column holds, except the tables an erasure leaves
// rows in (leftByErasure), on the embedded store or PostgreSQL.
func userRows(t *testing.T, dataDir string, env []string, userID string) map[string]int {
	t.Helper()
	// One database/sql handle on either backend; only the catalogue query
	// differs.
	driver, dsn := "sqlite", "file:"+filepath.Join(dataDir, "cairn.db")+"?mode=ro"
	columns := `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND p.name IN ('user_id', 'owner_id')`
	if url := envValue(env, "CAIRN_DATABASE_URL"); url != "" {
		driver, dsn = "pgx", url
		columns = `SELECT quote_ident(table_name), column_name FROM information_schema.columns
			WHERE table_schema = current_schema() AND column_name IN ('user_id', 'owner_id')`
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	rows, err := db.QueryContext(t.Context(), columns)
	if err != nil {
		t.Fatal(err)
	}
	type col struct{ table, column string }
	var cols []col
	for rows.Next() {
		var c col
		if err := rows.Scan(&c.table, &c.column); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		t.Fatal(err)
	}
	if len(cols) < 20 {
		t.Fatalf("only %d tables with a user column: %v", len(cols), cols)
	}
	count := func(q string) int {
		var n int
		if err := db.QueryRowContext(t.Context(), q, userID).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	left := map[string]int{}
	for _, c := range cols {
		if slices.Contains(leftByErasure, strings.Trim(c.table, `"`)) {
			continue
		}
		if n := count(`SELECT count(*) FROM ` + c.table + ` WHERE ` + c.column + ` = $1`); n > 0 {
			left[c.table] = n
		}
	}
	// The user record itself.
	if n := count(`SELECT count(*) FROM users WHERE id = $1`); n > 0 {
		left["users"] = n
	}
	return left
}

// TestEraseUserSweepsLateWrites: what of the user is written after its
// step has run (a job that was running when access was revoked finishes
// its batch) is erased by the last step before the user record goes, and
// counted.
func TestEraseUserSweepsLateWrites(t *testing.T) {
	ctx := t.Context()
	app, err := openApp(ctx, appConfig{dataDir: t.TempDir()}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	u, err := app.control.CreateUser(ctx, "lee")
	if err != nil {
		t.Fatal(err)
	}
	c := knowledge.Caller{UserID: u.ID, AgentID: "operator"}
	store := func(name string) {
		t.Helper()
		if _, err := app.knowledge.Store(ctx, c, knowledge.StoreRequest{Entities: []map[string]any{{"entity_type": "person", "name": name}}}); err != nil {
			t.Fatal(err)
		}
	}
	store("Early Bird")
	run := controlplane.ErasureRun{Runner: controlplane.NewErasureRunner(), Lease: time.Hour}
	job, _, err := app.control.BeginUserErasure(ctx, u.ID, stepAccess, "operator", "", run)
	if err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	e := &userEraser{a: &admin{store: app.control, out: &out, errw: &errw}, app: app, u: u, caller: c, job: job, run: run, counts: map[string]int{}, start: time.Now()}
	for _, step := range eraseSteps[:len(eraseSteps)-1] {
		if err := e.step(ctx, step); err != nil {
			t.Fatalf("step %s: %v", step, err)
		}
	}
	store("Late Comer")
	if _, err := app.knowledge.SaveMemory(ctx, c, knowledge.MemoryRequest{Collection: "notes", Text: "written late"}); err != nil {
		t.Fatal(err)
	}
	if err := e.step(ctx, stepRecords); err != nil {
		t.Fatalf("the last step: %v\n%s", err, errw.String())
	}
	if !strings.Contains(errw.String(), "written meanwhile") {
		t.Errorf("the last step did not say it found late writes: %s", errw.String())
	}
	if e.counts["entities"] != 2 || e.counts["memories"] != 1 || e.counts["users"] != 1 {
		t.Errorf("counts %v, want both entities, the memory and the user", e.counts)
	}
	var left []graph.Entity
	if err := app.graph.View(ctx, func(tx *graph.Tx) error {
		var err error
		left, _, err = tx.ListEntities(ctx, graph.EntityFilter{UserID: u.ID, IncludeMerged: true})
		return err
	}); err != nil || len(left) != 0 {
		t.Errorf("entities of the erased user: %v, %v", left, err)
	}
	if _, err := app.control.UserByName(ctx, "lee"); !errors.Is(err, controlplane.ErrNotFound) {
		t.Errorf("the user after the erasure: %v", err)
	}
}

// TestEraseUserWaitsForRunningJobs: the last step waits for a job of the
// user that is still running (asked to stop by the first step, it finishes
// its batch), then erases what the job wrote meanwhile, before the user
// record goes.
func TestEraseUserWaitsForRunningJobs(t *testing.T) {
	ctx := t.Context()
	app, err := openApp(ctx, appConfig{dataDir: t.TempDir()}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	u, err := app.control.CreateUser(ctx, "jo")
	if err != nil {
		t.Fatal(err)
	}
	c := knowledge.Caller{UserID: u.ID, AgentID: "operator"}
	now := time.Now()
	if err := app.control.EnqueueJob(ctx, files.Job{ID: "job_erase_wait", UserID: u.ID, Kind: files.JobInterpret, FileID: "file_x", MaxAttempts: 1, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	job, ok, err := app.control.LeaseJob(ctx, "worker-1", now, now.Add(time.Hour))
	if err != nil || !ok || job.ID != "job_erase_wait" {
		t.Fatalf("lease: %+v, %v, %v", job, ok, err)
	}
	run := controlplane.ErasureRun{Runner: controlplane.NewErasureRunner(), Lease: time.Hour}
	erasure, _, err := app.control.BeginUserErasure(ctx, u.ID, stepAccess, "operator", "", run)
	if err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	e := &userEraser{a: &admin{store: app.control, out: &out, errw: &errw}, app: app, u: u, caller: c, job: erasure, run: run, counts: map[string]int{}, start: time.Now()}
	for _, step := range eraseSteps[:len(eraseSteps)-1] {
		if err := e.step(ctx, step); err != nil {
			t.Fatalf("step %s: %v", step, err)
		}
	}
	// The job writes its last batch, then stops, while the last step waits.
	jobDone := make(chan error, 1)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		if _, err := app.knowledge.Store(ctx, c, knowledge.StoreRequest{Entities: []map[string]any{{"entity_type": "person", "name": "Written By The Job"}}}); err != nil {
			jobDone <- err
			return
		}
		jobDone <- app.control.FinishJob(ctx, job.ID, "worker-1", files.JobSucceeded, nil, "", "", time.Now())
	}()
	if err := e.step(ctx, stepRecords); err != nil {
		t.Fatalf("the last step: %v\n%s", err, errw.String())
	}
	if err := <-jobDone; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errw.String(), "waiting for 1 running job(s) of the user to stop") || !strings.Contains(errw.String(), "written meanwhile") {
		t.Errorf("the last step did not say it waited and found the job's writes:\n%s", errw.String())
	}
	if e.counts["entities"] != 1 || e.counts["users"] != 1 {
		t.Errorf("counts %v, want the job's entity and the user", e.counts)
	}
	if _, err := app.control.UserByName(ctx, "jo"); !errors.Is(err, controlplane.ErrNotFound) {
		t.Errorf("the user after the erasure: %v", err)
	}
}

// TestEraseUserStopsWithoutProgress: a batch whose ids are listed again
// after their erasure (a store that cannot delete them) stops the step
// with those ids rather than erasing them forever.
func TestEraseUserStopsWithoutProgress(t *testing.T) {
	ctx := t.Context()
	app, err := openApp(ctx, appConfig{dataDir: t.TempDir()}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	u, err := app.control.CreateUser(ctx, "pat")
	if err != nil {
		t.Fatal(err)
	}
	c := knowledge.Caller{UserID: u.ID, AgentID: "operator"}
	res, err := app.knowledge.Store(ctx, c, knowledge.StoreRequest{Entities: []map[string]any{{"entity_type": "person", "name": "Stuck Stan"}}})
	if err != nil {
		t.Fatal(err)
	}
	stuck := res.Entities[0].EntityID
	run := controlplane.ErasureRun{Runner: controlplane.NewErasureRunner(), Lease: time.Hour}
	erasure, _, err := app.control.BeginUserErasure(ctx, u.ID, stepEntities, "operator", "", run)
	if err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	e := &userEraser{a: &admin{store: app.control, out: &out, errw: &errw}, app: app, u: u, caller: c, job: erasure, run: run, counts: map[string]int{}, start: time.Now()}
	calls := 0
	// The listing goes on naming the entity after its erasure.
	next := func(context.Context) ([]string, error) {
		calls++
		if calls > 5 {
			t.Fatal("the step went on listing the same batch")
		}
		return []string{stuck}, nil
	}
	err = e.batches(ctx, stepEntities, next, knowledge.EraseEntity)
	if err == nil || !strings.Contains(err.Error(), "made no progress") || !strings.Contains(err.Error(), stuck) {
		t.Fatalf("batches = %v, want a stop that names %s", err, stuck)
	}
	if calls != 2 {
		t.Errorf("the listing was read %d times, want 2 (the batch, then the same batch again)", calls)
	}
}
