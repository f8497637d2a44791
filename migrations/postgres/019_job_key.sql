-- The API key whose call queued a job ('' from the command line): the
-- files the job stores of its own (an e-mail's attachments) count against
-- that key's upload rate limit (issue 34, D5).
ALTER TABLE cairn_jobs ADD COLUMN key_id TEXT NOT NULL DEFAULT '';
