// The runner's lock node is unique by name, so that MERGE in
// migration_lock_acquire never creates two.
CREATE CONSTRAINT cairn_migration_lock_name IF NOT EXISTS
FOR (l:CairnMigrationLock) REQUIRE l.name IS UNIQUE
