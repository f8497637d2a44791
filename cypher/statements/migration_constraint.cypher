// The first thing the migration runner does: a uniqueness constraint on
// the version node, so that two runners that start at once cannot record a
// version twice.
CREATE CONSTRAINT cairn_migration_version IF NOT EXISTS
FOR (m:CairnMigration) REQUIRE m.version IS UNIQUE
