package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// QueryPlan returns the steps SQLite plans for query with args (EXPLAIN
// QUERY PLAN), joined by "; ". Without statistics SQLite prefers an index
// that starts with the user to one that finds a few rows by id, and walks
// every row of the user; the drivers' tests check the plans of the
// statements that must not.
func QueryPlan(ctx context.Context, db *sql.DB, query string, args ...any) (string, error) {
	rows, err := db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		return "", fmt.Errorf("sqlite: query plan: %w", err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var step string
		if err := rows.Scan(&id, &parent, &unused, &step); err != nil {
			return "", fmt.Errorf("sqlite: query plan: %w", err)
		}
		steps = append(steps, step)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("sqlite: query plan: %w", err)
	}
	return strings.Join(steps, "; "), nil
}
