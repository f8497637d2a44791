package consent

// OwnerAgent is the name of the agent the owner key is bound to on first
// run. The owner agent keeps full access whatever the consent rules say.
const OwnerAgent = "owner"

// Principal is the authenticated caller: a user, the agent acting for them,
// and the key that proved it (empty for stdio, which runs as a configured
// agent without a key).
type Principal struct {
	UserID    string
	UserName  string
	AgentID   string
	AgentName string
	KeyID     string
	// Owner is true for the owner user's owner agent.
	Owner bool
}

// User is a person whose data Cairn keeps.
type User struct {
	ID      string
	Name    string
	IsOwner bool
}

// Agent is a named client acting for a user (claude, cursor, …).
type Agent struct {
	ID     string
	UserID string
	Name   string
}
