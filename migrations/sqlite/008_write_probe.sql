-- One row that /readyz and the start of serve and stdio rewrite, to learn
-- whether the store can be written: a store that answers reads but refuses
-- writes (a read-only file or directory, a full disk) is not ready.
CREATE TABLE cairn_write_probe (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    probes BIGINT NOT NULL
);
INSERT INTO cairn_write_probe (id, probes) VALUES (1, 0);
