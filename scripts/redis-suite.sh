#!/usr/bin/env bash
# Runs Redis 7.0.15's own test suite (its tests/ in external mode) against a
# basalt started with its defaults, and prints each unit's pass and fail
# counts. A manual check, not part of CI: Redis's tests are not packaged by
# Debian and CI cannot fetch them. Give it a Redis source tree at tag 7.0.15
# (runtest and tests/ are enough):
#
#   scripts/redis-suite.sh [--against-redis] /path/to/redis [unit ...]
#
# --against-redis runs the same against Debian's redis-server instead, for
# the counts basalt is measured by.
#
# With no units it runs the list in docs/compatibility.md. The tags excluded
# are those the suite can only pass against a local redis-server (DEBUG,
# replication, SAVE, maxmemory, ...). Each unit's full output is kept in
# $REDIS_SUITE_LOGS if set.
set -uo pipefail
server=basalt
if [ "${1:-}" = --against-redis ]; then
	server=redis-server
	shift
fi
tree=${1:?usage: redis-suite.sh [--against-redis] REDIS_TREE [unit ...]}
shift
tree=$(cd "$tree" && pwd)
cd "$(dirname "$0")/.."
command -v tclsh >/dev/null || { echo "needs tclsh (apt-get install tcl)"; exit 1; }

units=("$@")
[ ${#units[@]} -gt 0 ] || units=(
	type/string type/incr type/hash type/list type/list-3 type/set type/zset
	type/stream type/stream-cgroups
	bitops bitfield expire keyspace multi scan info-command protocol pubsub
	scripting hyperloglog geo auth acl querybuf
)
tags=(needs:debug needs:pfdebug needs:repl needs:save needs:config-maxmemory
	needs:config-resetstat needs:reset needs:latency needs:local-process)

work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$work"' EXIT
go build -o "$work/basalt" ./cmd/basalt || exit 1
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
if [ $server = basalt ]; then
	"$work/basalt" --port "$port" --dir "$work/data" >"$work/server.log" 2>&1 &
else
	mkdir "$work/data"
	redis-server --port "$port" --dir "$work/data" --save '' >"$work/server.log" 2>&1 &
fi
pid=$!
for _ in $(seq 100); do
	redis-cli -p "$port" ping >/dev/null 2>&1 && break
	sleep 0.1
done

args=(--host 127.0.0.1 --port "$port" --durable --ignore-encoding --ignore-digest
	--timeout 120)
for t in "${tags[@]}"; do args+=(--tags "-$t"); done
total_ok=0 total_err=0
for u in "${units[@]}"; do
	# Each unit gets a fresh keyspace: a unit that stopped halfway must not
	# leave keys that fail the next one.
	redis-cli -p "$port" flushall >/dev/null 2>&1
	out="${REDIS_SUITE_LOGS:-$work}/$(echo "$u" | tr / _).out"
	(cd "$tree" && ./runtest "${args[@]}" --single "unit/$u") 2>&1 |
		sed 's/\x1b\[[0-9;]*m//g' >"$out"
	ok=$(grep -c '^\[ok\]' "$out")
	err=$(grep -c '^\[err\]\|^\[exception\]\|\[TIMEOUT\]' "$out")
	printf '%-22s %5d ok %4d err\n' "$u" "$ok" "$err"
	grep '^\[err\]\|^\[exception\]\|^\[TIMEOUT\]' "$out" | sed 's/^/    /' | head -40
	total_ok=$((total_ok + ok)) total_err=$((total_err + err))
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "$server exited; log tail:"; tail -20 "$work/server.log"; exit 1
	fi
done
printf '%-22s %5d ok %4d err\n' total "$total_ok" "$total_err"
