package oauth

import (
	"github.com/ory/fosite"
)

// session is what a grant carries: the user and the agent its tokens act
// as, set when the owner approves.
type session struct {
	fosite.DefaultSession
	User  string `json:"user_id"`
	Agent string `json:"agent_id"`
}

func newSession(userID, agentID, subject string) *session {
	return &session{DefaultSession: fosite.DefaultSession{Subject: subject}, User: userID, Agent: agentID}
}

func (s *session) userID() string  { return s.User }
func (s *session) agentID() string { return s.Agent }

// Clone implements fosite.Session; fosite clones the session of a grant
// into every token it issues from it, so the user and agent must follow.
func (s *session) Clone() fosite.Session {
	if s == nil {
		return nil
	}
	c := *s
	if d, ok := s.DefaultSession.Clone().(*fosite.DefaultSession); ok && d != nil {
		c.DefaultSession = *d
	}
	return &c
}
