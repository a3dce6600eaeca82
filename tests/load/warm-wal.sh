#!/usr/bin/env bash
# Gives a throwaway benchmark cluster the WAL of a server that has been running:
#   tests/load/warm-wal.sh URL
# A new cluster creates (and zero-fills, and fsyncs) each 16 MB WAL segment the first time it needs it, under
# the lock every commit waits for; a running server recycles old segments at its checkpoints instead. At about
# 4 KB of WAL per order, an ingestion burst needs a new segment every second or so, and on a fresh cluster each
# one stalled every commit for 40-55 ms: that, not the work per order, was the p99 at 64 connections. This sets
# the sizes recommended for a hub's PostgreSQL (docs/testing.md, Performance; deploy/SCALING.md): min_wal_size 2GB (so a
# checkpoint keeps that much WAL for reuse, also after a quiet hour) and max_wal_size 4GB (so checkpoints come
# from checkpoint_timeout, not from a burst), then writes about 1.1 GB of WAL once and checkpoints twice, which
# leaves about 70 segments ready. fsync and synchronous_commit are left as they are. Takes about 10 s.
set -euo pipefail
url=$1
psql=/usr/lib/postgresql/15/bin/psql
sql() { "$psql" -X -q -tA -v ON_ERROR_STOP=1 -d "$url" -c "$1" >/dev/null; }
sql "ALTER SYSTEM SET min_wal_size = '2GB'"
sql "ALTER SYSTEM SET max_wal_size = '4GB'"
sql "SELECT pg_reload_conf()"
sql "CREATE TABLE wal_warmup AS SELECT repeat('x', 900) AS x FROM generate_series(1, 1200000)"
sql "DROP TABLE wal_warmup"
sql "CHECKPOINT"
sql "CHECKPOINT"
