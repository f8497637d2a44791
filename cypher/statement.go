package cypher

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

//go:embed statements/*.cypher
var files embed.FS

// Placeholders that Render fills. Each is a valid Cypher name as it stands,
// so that a statement still parses (and lints) before it is filled.
const (
	labelPlaceholder   = "__LABEL__"
	relTypePlaceholder = "__REL_TYPE__"
	maxHopsPlaceholder = "__MAX_HOPS__"
)

// MaxHopsLimit is the largest upper bound Render puts on a variable-length
// pattern. A cycle check needs a bound no smaller than the number of the
// user's entities to be exhaustive; beyond this many a traversal belongs in
// a breadth-first loop of single hops (reach_level), not in one pattern.
const MaxHopsLimit = 100_000

// CrossUser lists the statements that are not scoped to one user, and why:
// the workers that drain the outbox claim entries of every user, the
// text-signature backfill at start gives entities of every user theirs
// (and their completion keys), and the migration runner keeps its own
// bookkeeping nodes.
var CrossUser = map[string]string{
	"outbox_claim":              "outbox workers claim entries of every user",
	"outbox_ack":                "settles claimed entries, each matched under its own user_id",
	"outbox_release":            "frees claimed entries, each matched under its own user_id",
	"entities_without_text_sig": "the text-signature backfill at start reads entities of every user",
	"entities_text_sig_set":     "the text-signature backfill sets only the signature and completion keys, of entities it read",
	"relationship_index":        "a schema command: indexes hold every user's relationships",
	"migration_applied":         "migration bookkeeping",
	"migration_record":          "migration bookkeeping",
	"migration_lock_acquire":    "migration bookkeeping",
	"migration_lock_release":    "migration bookkeeping",
	"migration_lock_constraint": "migration bookkeeping",
	"migration_constraint":      "migration bookkeeping",
	"server_version":            "reads the server's version at start",
	"database_clear":            "empties a scratch database (cairn bench, test harnesses)",
	"database_holds_data":       "cairn bench checks that its scratch database is empty",
	"test_outbox_expire":        "the crash test moves a killed process's outbox leases into the past",
}

var statementName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Statement is one named Cypher statement.
type Statement struct {
	name string
	text string
}

// Name returns the statement's name: its file name without .cypher.
func (s Statement) Name() string { return s.name }

// Text returns the statement as written in its file, placeholders and all.
func (s Statement) Text() string { return s.text }

// Placeholders returns the placeholders the statement uses, in a fixed
// order.
func (s Statement) Placeholders() []string {
	var out []string
	for _, p := range []string{labelPlaceholder, relTypePlaceholder, maxHopsPlaceholder} {
		if strings.Contains(s.text, p) {
			out = append(out, p)
		}
	}
	return out
}

// Fill holds what Render puts into a statement's placeholders. A zero field
// fills nothing; a field the statement has no placeholder for is an error,
// as is a placeholder left without a value.
type Fill struct {
	// EntityType fills __LABEL__ with Label(EntityType).
	EntityType string
	// RelType fills __REL_TYPE__ with RelType(RelType).
	RelType string
	// MaxHops fills __MAX_HOPS__; it must be 1..MaxHopsLimit.
	MaxHops int
}

// Render returns the statement's Cypher with its placeholders filled from
// f, after checking every value. A statement without placeholders renders
// with Fill{}.
func (s Statement) Render(f Fill) (string, error) {
	text := s.text
	fill := func(placeholder, value string, given bool) error {
		has := strings.Contains(text, placeholder)
		switch {
		case has && !given:
			return fmt.Errorf("cypher: %s: %s needs a value", s.name, placeholder)
		case !has && given:
			return fmt.Errorf("cypher: %s has no %s to fill", s.name, placeholder)
		}
		text = strings.ReplaceAll(text, placeholder, value)
		return nil
	}
	label := ""
	if f.EntityType != "" {
		l, err := Label(f.EntityType)
		if err != nil {
			return "", err
		}
		label = l
	}
	if err := fill(labelPlaceholder, label, f.EntityType != ""); err != nil {
		return "", err
	}
	relType := ""
	if f.RelType != "" {
		t, err := RelType(f.RelType)
		if err != nil {
			return "", err
		}
		relType = t
	}
	if err := fill(relTypePlaceholder, relType, f.RelType != ""); err != nil {
		return "", err
	}
	if f.MaxHops < 0 || f.MaxHops > MaxHopsLimit {
		return "", fmt.Errorf("cypher: %s: max hops %d is outside 1..%d", s.name, f.MaxHops, MaxHopsLimit)
	}
	if err := fill(maxHopsPlaceholder, strconv.Itoa(f.MaxHops), f.MaxHops != 0); err != nil {
		return "", err
	}
	return text, nil
}

// Cypher returns the text of a statement without placeholders, or an error
// naming the placeholders it needs.
func (s Statement) Cypher() (string, error) { return s.Render(Fill{}) }

// Load returns the statement of that name, or an error when there is none.
func Load(name string) (Statement, error) {
	if !statementName.MatchString(name) {
		return Statement{}, fmt.Errorf("cypher: %q is not a statement name", name)
	}
	body, err := files.ReadFile(path.Join("statements", name+".cypher"))
	if err != nil {
		return Statement{}, fmt.Errorf("cypher: no statement %q", name)
	}
	text := strings.TrimSpace(stripComments(string(body)))
	if text == "" {
		return Statement{}, fmt.Errorf("cypher: statement %q is empty", name)
	}
	return Statement{name: name, text: text}, nil
}

// Must is Load for package-level variables: an unknown name panics when the
// program starts (and in every test of the package that names it), never
// later in a request.
func Must(name string) Statement {
	s, err := Load(name)
	if err != nil {
		panic(err)
	}
	return s
}

// Names returns the names of every statement, sorted.
func Names() []string {
	entries, err := fs.ReadDir(files, "statements")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".cypher"); ok {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// stripComments drops the lines that are only a // comment: the header
// each file starts with, which says what the statement is for. Comments at
// the end of a line of Cypher stay; Neo4j takes them.
func stripComments(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "//") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
