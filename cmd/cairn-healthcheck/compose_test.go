package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// composeCommand returns how to run Docker Compose here (the docker CLI's
// compose plugin, or the standalone docker-compose), or skips the test
// with one line when there is neither. Validating the file needs no
// Docker engine.
func composeCommand(t *testing.T) []string {
	t.Helper()
	if _, err := exec.LookPath("docker"); err == nil {
		if exec.Command("docker", "compose", "version").Run() == nil {
			return []string{"docker", "compose"}
		}
	}
	if _, err := exec.LookPath("docker-compose"); err == nil {
		return []string{"docker-compose"}
	}
	t.Skip("docker compose is not installed (neither the docker CLI's compose plugin nor docker-compose); docker-compose.yml is not validated")
	return nil
}

// TestComposeConfig validates docker-compose.yml with Docker Compose itself
// and checks the wiring the README promises.
func TestComposeConfig(t *testing.T) {
	compose := composeCommand(t)
	file, err := filepath.Abs(filepath.Join("..", "..", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	args := append(compose[1:], "-f", file, "config")
	cmd := exec.CommandContext(t.Context(), compose[0], args...)
	cmd.Env = append(os.Environ(),
		"CAIRN_OWNER_KEY=cairn_owner_key_for_the_compose_test_0123456789",
		"CAIRN_NEO4J_PASSWORD=neo4jpass", "POSTGRES_PASSWORD=pgpass")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s config: %v\n%s", strings.Join(compose, " "), err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"CAIRN_NEO4J_URI: bolt://neo4j:7687",
		"CAIRN_DATABASE_URL: postgres://cairn:pgpass@postgres:5432/cairn",
		"CAIRN_ADDR: 0.0.0.0:7400",
		"image: neo4j:5",
		"image: pgvector/pgvector:pg17",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("docker compose config does not have %q:\n%s", want, out)
		}
	}

	// The secrets come from the environment or the file is refused.
	missing := exec.CommandContext(t.Context(), compose[0], args...)
	missing.Env = append(os.Environ(), "CAIRN_OWNER_KEY=", "CAIRN_NEO4J_PASSWORD=neo4jpass", "POSTGRES_PASSWORD=pgpass")
	if msg, err := missing.CombinedOutput(); err == nil || !strings.Contains(string(msg), "CAIRN_OWNER_KEY") {
		t.Errorf("without CAIRN_OWNER_KEY, config = %v:\n%s", err, msg)
	}
}
