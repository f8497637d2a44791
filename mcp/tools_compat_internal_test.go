package mcp

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairnkg/cairn/knowledge"
)

// v0Failure renames by the table and nothing else: a failure the table
// does not name keeps Cairn's code, and a renamed internal error keeps its
// cause for the server log while its answer says nothing of it.
func TestV0FailureRenamesByTheTable(t *testing.T) {
	cause := errors.New("disk on fire")
	notFound := &knowledge.NotFoundError{Kind: knowledge.ErrEntityNotFound, ID: "ent_x"}
	for _, tc := range []struct {
		name, action string
		err          error
		code         string
	}{
		{"internal, submit_payload", "submit_payload", cause, CodeDBInsertFailed},
		{"internal, update_record", "update_record", cause, CodeDBUpdateFailed},
		{"internal, retrieve_records", "retrieve_records", cause, CodeSearchFailed},
		{"internal, get_entity_snapshot", "get_entity_snapshot", cause, CodeDBQueryFailed},
		{"not found, update_record", "update_record", notFound, CodeRecordNotFound},
		{"not found, get_entity_snapshot", "get_entity_snapshot", notFound, CodeEntityNotFound},
		{"internal, get_file_url", "get_file_url", cause, CodeInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := v0Failure(tc.action, tc.err)
			e := toError(err)
			if e.Body.Code != tc.code {
				t.Errorf("code %s, want %s", e.Body.Code, tc.code)
			}
			if strings.Contains(e.Body.Message, cause.Error()) {
				t.Errorf("the answer tells the cause: %q", e.Body.Message)
			}
			if tc.err == cause && !strings.Contains(err.Error(), cause.Error()) {
				t.Errorf("the logged error %q lost its cause", err)
			}
		})
	}
	for action, codes := range v0Codes {
		if _, ok := codes[CodeConsentDenied]; ok {
			t.Errorf("%s renames CONSENT_DENIED: a refusal must read as one", action)
		}
	}
}
