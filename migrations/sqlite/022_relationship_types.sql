-- Relationship types a user named on first use (issue 35): create_relationship
-- with a well-formed type that no schema declares registers it for the user,
-- not acyclic (a schema declares acyclic types).
CREATE TABLE cairn_relationship_types (
    user_id    TEXT NOT NULL,
    name       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, name)
);
