-- Wake the forwarders only when a job becomes pending. The statement trigger of 0003 also fired on every claim
-- (pending -> in_flight) and every finish (-> delivered), and each wake-up costs every forwarder a claim query.
DROP TRIGGER forward_jobs_notify ON hub.forward_jobs;

-- New jobs are always pending: one notification per inserting statement (a group commit inserts hundreds).
CREATE TRIGGER forward_jobs_notify_insert AFTER INSERT ON hub.forward_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION hub.notify_forward_jobs();

-- A retry, a resend or a released claim puts a job back to pending; the WHEN clause is evaluated without calling
-- the function, and PostgreSQL folds identical notifications of one transaction into one.
CREATE TRIGGER forward_jobs_notify_pending AFTER UPDATE OF state, due_at ON hub.forward_jobs
    FOR EACH ROW WHEN (NEW.state = 'pending') EXECUTE FUNCTION hub.notify_forward_jobs();
