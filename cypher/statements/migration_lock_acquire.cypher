// Takes or renews the migration runners' lease: a runner holds it when the
// row comes back with its own $holder. Schema commands cannot share a
// transaction with data writes, so a transaction's own lock cannot cover
// them; a lease can, and one that ends ($until) frees the runners of a
// process that died. Writing l.locked first takes the node's exclusive
// lock, so the holder read after it is the committed one.
MERGE (l:CairnMigrationLock {name: 'migrations'})
SET l.locked = true
WITH l
WHERE l.holder IS NULL OR l.holder = $holder OR l.until <= $now
SET l.holder = $holder, l.until = $until
REMOVE l.locked
RETURN l.holder AS holder
