package files_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cairnkg/cairn/knowledge"
	"github.com/cairnkg/cairn/knowledge/files"
)

// A file's types, what its interpretation found it to hold, only grow,
// concurrent adders included, and decide who may read the file: a caller
// that may not read one of them finds no such file (issue 34, D2).
func TestFileTypesGrowAndGuardTheFile(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b, files.Options{})
		ctx := t.Context()
		owner := knowledge.Caller{UserID: "user-types", AgentID: "claude"}
		st, err := e.svc.Put(ctx, owner, strings.NewReader("Invoice number: INV-1\n"), files.PutRequest{Filename: "inv.txt"})
		if err != nil {
			t.Fatal(err)
		}
		id := st.File.ID
		var want []string
		var wg sync.WaitGroup
		for i := range 8 {
			typ := fmt.Sprintf("type_%d", i)
			want = append(want, typ)
			wg.Go(func() {
				if err := e.control.AddFileTypes(ctx, owner.UserID, id, []string{typ, "invoice"}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		want = append(want, "invoice")
		slices.Sort(want)
		f, err := e.svc.File(ctx, owner, id)
		if err != nil || !slices.Equal(f.Types, want) {
			t.Fatalf("types = %v (%v), want %v", f.Types, err, want)
		}
		if err := e.control.AddFileTypes(ctx, owner.UserID, id, nil); err != nil {
			t.Fatal(err)
		}
		got, err := files.SourceTypes(e.control)(ctx, owner.UserID, id)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("SourceTypes = %v (%v), want %v", got, err, want)
		}
		if got, err := files.SourceTypes(e.control)(ctx, owner.UserID, "src_not_a_file"); err != nil || got != nil {
			t.Fatalf("SourceTypes of a source that is no file = %v (%v), want none", got, err)
		}

		noInvoices := owner
		noInvoices.Allowed = func(a knowledge.Action, r string) bool { return r != knowledge.EntityResource("invoice") }
		if _, err := e.svc.File(ctx, noInvoices, id); !errors.Is(err, files.ErrFileNotFound) {
			t.Fatalf("a caller denied invoices: %v, want ErrFileNotFound", err)
		}
		if _, err := e.svc.SignURL(ctx, noInvoices, id, 0); !errors.Is(err, files.ErrFileNotFound) {
			t.Fatalf("a URL for a caller denied invoices: %v, want ErrFileNotFound", err)
		}
	})
}
