-- Tokens expire: each carries its end of life, set at login from `orderpos serve --token-lifetime` (tokens
-- issued before this migration get the default lifetime, 12 hours from their issue). Expired tokens and
-- failure rows older than the throttle window are purged a bounded number at a time; these indexes find them.
ALTER TABLE pos.tokens ADD COLUMN expires_at timestamptz;
UPDATE pos.tokens SET expires_at = created_at + interval '12 hours';
ALTER TABLE pos.tokens ALTER COLUMN expires_at SET NOT NULL;
CREATE INDEX tokens_expires_idx ON pos.tokens (expires_at);
CREATE INDEX login_failures_last_failure_idx ON pos.login_failures (last_failure_at);
