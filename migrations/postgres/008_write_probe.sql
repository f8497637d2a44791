-- One row that /readyz and the start of serve and stdio rewrite, to learn
-- whether the database can be written: a database that answers reads but
-- refuses writes (a hot standby, default_transaction_read_only, a full disk)
-- is not ready.
CREATE TABLE cairn_write_probe (
    id     SMALLINT PRIMARY KEY CHECK (id = 1),
    probes BIGINT NOT NULL
);
INSERT INTO cairn_write_probe (id, probes) VALUES (1, 0);
