-- Manual-accept branches (product.md section 11, issue 22): a new order of a branch with manual_accept is held in
-- the hub until a user of the branch accepts it (then it is sent with status ACCEPTED) or rejects it, or until
-- the branch's accept_timeout_minutes pass. The held job is not `pending`, so no claim (forward_jobs_brand_due_idx,
-- `state = 'pending'`) and no give-up sweep ever reads it.
--
--   awaiting_acceptance  held for the branch's staff until accept_deadline
--   merchant_rejected    a user of the branch rejected it: never sent (status log merchant_rejected)
--   timed_out            no decision before accept_deadline: never sent (status log time_out)
-- A platform cancellation during the wait ends it as `cancelled`, as for a pending job.
ALTER TABLE hub.forward_jobs DROP CONSTRAINT forward_jobs_state_check;
ALTER TABLE hub.forward_jobs ADD CONSTRAINT forward_jobs_state_check
    CHECK (state IN ('pending', 'in_flight', 'delivered', 'rejected', 'auth_failed', 'dead', 'cancelled',
                     'awaiting_acceptance', 'merchant_rejected', 'timed_out'));

-- accept_deadline: when a held job times out (set when it is stored, from the branch's accept_timeout_minutes).
-- accepted_at: when a user accepted it; the claim sends an accepted job with status ACCEPTED.
ALTER TABLE hub.forward_jobs
    ADD COLUMN accept_deadline timestamptz,
    ADD COLUMN accepted_at timestamptz,
    ADD CONSTRAINT forward_jobs_held_has_deadline CHECK (state <> 'awaiting_acceptance' OR accept_deadline IS NOT NULL);

-- The time-out sweep's walk (every serving forwarder runs it; FOR UPDATE SKIP LOCKED makes each time-out once).
CREATE INDEX forward_jobs_accept_deadline_idx ON hub.forward_jobs (accept_deadline)
    WHERE state = 'awaiting_acceptance';

