package main

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// specialEnv are variables read outside the flag machinery.
var specialEnv = []string{"CAIRN_OWNER_KEY", "CAIRN_EMBED_API_KEY"}

// TestReadmeConfigurationTable keeps the README's configuration table and
// the commands' environment variables in step.
func TestReadmeConfigurationTable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile("(?m)^\\| [^|]* \\| `(CAIRN_[A-Z0-9_]+)` \\|").FindAllSubmatch(readme, -1)
	var documented []string
	for _, r := range rows {
		documented = append(documented, string(r[1]))
	}
	var used []string
	for _, c := range commands() {
		for _, ev := range c.env {
			if !slices.Contains(used, ev.env) {
				used = append(used, ev.env)
			}
		}
	}
	used = append(used, specialEnv...)
	for _, v := range used {
		if !slices.Contains(documented, v) {
			t.Errorf("%s is read but missing from the README's configuration table", v)
		}
	}
	for _, v := range documented {
		if !slices.Contains(used, v) {
			t.Errorf("the README documents %s, which nothing reads", v)
		}
	}
}
