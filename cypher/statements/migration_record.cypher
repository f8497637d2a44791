// Records that a migration was applied. MERGE: a runner whose lease ran out
// may record a version another recorded (its statements are idempotent).
MERGE (m:CairnMigration {version: $version})
  ON CREATE SET m.name = $name, m.applied_at = $appliedAt
