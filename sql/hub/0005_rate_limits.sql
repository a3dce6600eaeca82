-- Per-partner rate limits (token bucket); NULL uses the hub's defaults (`serve --rate-limit-per-second/-burst`).
ALTER TABLE hub.partners
    ADD COLUMN rate_per_second numeric CHECK (rate_per_second > 0),
    ADD COLUMN rate_burst integer CHECK (rate_burst > 0);
