-- The append-only triggers of the status log fire whatever the session's session_replication_role: a superuser
-- (or anyone allowed to set it) who sets it to 'replica' no longer skips them. What remains to the table's
-- owner and to a superuser (ALTER TABLE ... DISABLE TRIGGER, DROP TABLE) is said in docs/security.md; `serve`
-- runs with a login that owns nothing.
ALTER TABLE hub.order_status_log ENABLE ALWAYS TRIGGER order_status_log_no_update_delete;
ALTER TABLE hub.order_status_log ENABLE ALWAYS TRIGGER order_status_log_no_truncate;
