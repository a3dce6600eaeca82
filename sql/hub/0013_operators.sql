-- Operators (issue 21): what `branch update` can change, and finding a refused request by the platform's ids.

-- How a branch's new orders are accepted: auto_accept (sent as ACCEPTED), manual_accept (held for the branch's
-- staff, product.md section 11), or neither (sent as PENDING). One mode at a time. This build stores the manual
-- mode and its time-out but does not hold orders yet: docs/operations.md says so.
ALTER TABLE hub.branches
    ADD COLUMN manual_accept boolean NOT NULL DEFAULT false,
    ADD COLUMN accept_timeout_minutes integer NOT NULL DEFAULT 10 CHECK (accept_timeout_minutes BETWEEN 1 AND 10080),
    ADD CONSTRAINT branches_one_accept_mode CHECK (NOT (auto_accept AND manual_accept));

-- The branch a request named, whenever its body could be read that far (refused requests included), like event
-- and external_id; `orderhub events list --external-id` finds requests by the platform's order id.
ALTER TABLE hub.inbox ADD COLUMN branch_id text;
CREATE INDEX inbox_external_id_idx ON hub.inbox (external_id, id) WHERE external_id IS NOT NULL;
