-- Performance (issue 23): every webhook wrote two index entries for its inbox id, one in the key (id, received_at)
-- and one in inbox_id_idx (id). The key's index has id as its first column, so it serves every lookup by id
-- alone (`events replay`, `events show`); the second index only cost an index insert and its WAL per request.
DROP INDEX hub.inbox_id_idx;
