// Ends the migration lease of $holder, if it still holds it.
MATCH (l:CairnMigrationLock {name: 'migrations'})
WHERE l.holder = $holder
SET l.holder = null, l.until = null
