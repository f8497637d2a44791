package transfer_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cairnkg/cairn/consent"
	"github.com/cairnkg/cairn/graph"
	"github.com/cairnkg/cairn/knowledge/files"
	"github.com/cairnkg/cairn/knowledge/schema"
	"github.com/cairnkg/cairn/transfer"
)

// Format version 2 names every field in snake_case (issue 35): no line of
// an export holds a Go field name. Version 1 files, which did, are still
// read: the generated store's export rewritten in version 1 imports into a
// new store whose export is the same file.
func TestExportNamesInSnakeCaseAndReadsVersion1(t *testing.T) {
	clk := &clock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	src := openEmbedded(t, clk)
	u, err := src.stores.Control.CreateUser(t.Context(), "chuck")
	if err != nil {
		t.Fatal(err)
	}
	generate(t, src, clk, u)
	opts := transfer.ExportOptions{Users: []consent.User{u}, Consent: true, GlobalSchemas: true}
	v2 := exported(t, src.stores, opts)

	var keys []string
	var collect func(v any, user bool)
	collect = func(v any, user bool) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if !user {
					keys = append(keys, k)
				}
				// Values under these keys are user data: their keys are
				// the user's, not the format's.
				collect(e, user || k == "snapshot" || k == "fields" || k == "metadata" || k == "provenance" || k == "row" || k == "value")
			}
		case []any:
			for _, e := range x {
				collect(e, user)
			}
		}
	}
	for _, line := range bytes.Split(bytes.TrimSpace(v2), []byte("\n")) {
		var l struct {
			Kind string          `json:"kind"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatal(err)
		}
		var d any
		if err := json.Unmarshal(l.Data, &d); err != nil {
			t.Fatal(err)
		}
		if l.Kind == transfer.KindSchema {
			continue // a schema's definition has its own (snake_case) names, and field names of the user's
		}
		collect(d, false)
	}
	for _, k := range keys {
		if strings.ToLower(k) != k || strings.Contains(k, "__") {
			t.Errorf("the export names a field %q, not in snake_case", k)
		}
	}

	// The same export in version 1, as encoding/json wrote it.
	types := map[string]func() any{
		transfer.KindHeader: func() any { return &transfer.Header{} }, transfer.KindUser: func() any { return &consent.User{} },
		transfer.KindSchema: func() any { return &schema.Version{} }, transfer.KindSource: func() any { return &graph.Source{} },
		transfer.KindEntity: func() any { return &transfer.Entity{} }, transfer.KindObservation: func() any { return &graph.Observation{} },
		transfer.KindTimeline: func() any { return &graph.EntityTimeline{} }, transfer.KindRawFragment: func() any { return &graph.RawFragment{} },
		transfer.KindRelationship:            func() any { return &graph.Relationship{} },
		transfer.KindRelationshipObservation: func() any { return &graph.RelationshipObservation{} },
		transfer.KindBlob:                    func() any { return &transfer.Blob{} }, transfer.KindFile: func() any { return &files.File{} },
		transfer.KindMemory: func() any { return &transfer.Memory{} }, transfer.KindRow: func() any { return &transfer.Row{} },
		transfer.KindAudit: func() any { return &consent.AuditRecord{} }, transfer.KindEnd: func() any { return &transfer.End{} },
	}
	var v1 bytes.Buffer
	sum := sha256.New()
	sc := bufio.NewScanner(bytes.NewReader(v2))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var l transfer.Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		v := types[l.Kind]()
		if err := transfer.UnmarshalSnake(l.Data, v); err != nil {
			t.Fatalf("%s: %v", l.Kind, err)
		}
		switch x := v.(type) {
		case *transfer.Header:
			x.Version = 1
		case *transfer.End:
			x.SHA256 = hex.EncodeToString(sum.Sum(nil))
		}
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(transfer.Line{Kind: l.Kind, User: l.User, Data: data})
		out = append(out, '\n')
		if l.Kind != transfer.KindEnd {
			sum.Write(out)
		}
		v1.Write(out)
	}
	if !bytes.Contains(v1.Bytes(), []byte(`"CanonicalName"`)) {
		t.Fatal("the rewritten file is not in version 1's names")
	}
	dst := openEmbedded(t, clk)
	imported(t, dst.stores, v1.Bytes())
	if again := exported(t, dst.stores, opts); !bytes.Equal(again, v2) {
		t.Errorf("the store imported from version 1 exports differently:\n%s\nwant\n%s", again, v2)
	}
}
