-- One run at a time of a user's erasure (cairn admin erase --user, issue
-- 37): the run holds the erasure as its runner (host/pid/random) until
-- lease_until (microseconds), which it renews while it works; a second run
-- is refused while the lease holds, unless the runner is a process of this
-- host that no longer exists (a run that crashed), and takes the erasure
-- over once it lapses.
ALTER TABLE user_erasures ADD COLUMN runner TEXT NOT NULL DEFAULT '';
ALTER TABLE user_erasures ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;
