#!/bin/bash
# Makes (for tests/it/order_migration.rs) a SQLite store and a PostgreSQL store with planc $1 (commit 56c4736),
# the same changes on both; writes out the SQLite file and its dump, a pg_dump
# and the exports (without the success envelope). The fixtures beside this
# script are those files with a comment saying so on top (postgres.sql is
# dump.sql); run as root, with Debian's PostgreSQL 15.
set -e
PLANC=$1; OUT=$2; EX=$(git rev-parse --show-toplevel)/examples
mkdir -p $OUT
D=$(mktemp -d /tmp/order-pg-XXXX); chown postgres $D
BIN=/usr/lib/postgresql/15/bin
runuser -u postgres -- $BIN/initdb -D $D/data -A trust -U planc -E UTF8 --no-sync >/dev/null
runuser -u postgres -- $BIN/pg_ctl start -w -D $D/data -l $D/log -o "-k $D -p 5493 -c listen_addresses=" >/dev/null
trap "runuser -u postgres -- $BIN/pg_ctl stop -m immediate -D $D/data >/dev/null; rm -rf $D" EXIT
$BIN/psql -h $D -p 5493 -U planc -d postgres -c "CREATE DATABASE store" >/dev/null
PG="postgres:///store?host=$D&port=5493&user=planc"
SQ="sqlite:$OUT/store.db"
rm -f $OUT/store.db*
for S in "$PG" "$SQ"; do
  r() { $PLANC run "$@" --store "$S" >/dev/null; }
  r init $EX/jd_keyboard.plan --plan-id jd
  r next --agent a1 --plan-id jd
  r complete --agent a1 --result "Opened jd.com" --plan-id jd
  r add --name "Compare prices" --after 3 --plan-id jd
  r add --name "Read reviews" --after 2 --plan-id jd
  r remove 4 --plan-id jd
  r next --agent a2 --plan-id jd
  r add --name "Ask a friend" --plan-id jd
  r init $EX/coding_agent.plan --plan-id plain
  r next --agent a1 --plan-id plain
  r add --name "Write the changelog" --after 1 --plan-id plain
  r remove 2 --plan-id plain
done
PORT=7493
for S in "$PG" "$SQ"; do
  $PLANC serve --no-config --listen 127.0.0.1:$PORT --store "$S" >/dev/null 2>&1 &
  P=$!
  for i in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:$PORT/api/plans && break; sleep 0.2; done
  K=$( [ "$S" = "$PG" ] && echo postgres || echo sqlite )
  for id in jd plain; do curl -s http://127.0.0.1:$PORT/api/plans/$id > $OUT/$K.$id.export.json; done
  kill $P; wait $P 2>/dev/null || true
done
$BIN/pg_dump -h $D -p 5493 -U planc --inserts --no-owner --no-privileges --no-toast-compression --no-comments store \
  | grep -v '^\\restrict\|^\\unrestrict\|^--' | cat -s > $OUT/dump.sql
python3 - "$OUT/store.db" "$OUT/sqlite.sql" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
open(sys.argv[2], "w").write("\n".join(c.iterdump()) + "\n")
PY
python3 - "$OUT" <<'PY'
import sys, glob
for f in glob.glob(sys.argv[1] + "/*.export.json"):
    b = open(f, "rb").read(); pre = b'{"success":true,"data":'
    assert b.startswith(pre) and b.endswith(b"}")
    open(f, "wb").write(b[len(pre):-1])
PY
ls -la $OUT
