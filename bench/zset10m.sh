#!/usr/bin/env bash
# A leaderboard of 10,000,000 members: one sorted set loaded into
# redis-server, then into basalt (one server at a time, same appendfsync),
# and the commands of a leaderboard measured on it with bench/zsetload
# (ZSCORE, ZRANK of random members, ZRANGEBYSCORE of about 10 members,
# ZRANGE of 10 members at a random rank, ZADD score changes). Prints a
# markdown table with ops/s, the load rate, memory and data size. Each
# server rests SETTLE seconds after its load (compactions), then the
# tests run, writes last.
#
#   bench/zset10m.sh
#   N=1000000 SECS=5 PIPELINES=1 bench/zset10m.sh
#
# Environment: N=10000000 members, SECS=10 per test, SETTLE=30, CLIENTS=50,
# PIPELINES="1 16", FSYNC=always, TESTS=zscore,zrank,zrangebyscore,zrange,zadd,
# REV, BASALT_BIN, KEEP (as in run.sh).
set -euo pipefail

N=${N:-10000000}
SECS=${SECS:-10}
SETTLE=${SETTLE:-30}
CLIENTS=${CLIENTS:-50}
PIPELINES=${PIPELINES:-"1 16"}
FSYNC=${FSYNC:-always}
TESTS=${TESTS:-zscore,zrank,zrangebyscore,zrange,zadd}

. "$(dirname "$0")/lib.sh"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

build_basalt
(cd "$ROOT" && go build -o "$WORK/zsetload" ./bench/zsetload) || exit 1
start=$SECONDS

# measure NAME PORT PID DIR: load the set, run the tests, note memory and
# data size; appends "name<TAB>what<TAB>value" lines to $WORK/results.
measure() {
	local name=$1 port=$2 pid=$3 dir=$4 p line t0
	t0=$SECONDS
	line=$("$WORK/zsetload" -addr "127.0.0.1:$port" -n "$N" -load)
	printf '%s\tload\t%s\n' "$name" "${line#load,}" >>"$WORK/results"
	printf '%s\tcard\t%s\n' "$name" "$(redis-cli -p "$port" zcard bench:lb)" >>"$WORK/results"
	echo "$name: loaded in $((SECONDS - t0)) s" >&2
	sleep "$SETTLE"
	for p in $PIPELINES; do
		"$WORK/zsetload" -addr "127.0.0.1:$port" -n "$N" -tests "$TESTS" -secs "$SECS" -c "$CLIENTS" -P "$p" |
			while IFS=, read -r t ops; do printf '%s\t%s P%s\t%s\n' "$name" "$t" "$p" "$ops"; done >>"$WORK/results"
	done
	printf '%s\trss\t%s\n' "$name" "$(awk '/^VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/$pid/status")" >>"$WORK/results"
	printf '%s\tused_memory\t%s\n' "$name" \
		"$(redis-cli -p "$port" info memory 2>/dev/null | awk -F: '/^used_memory:/ { printf "%.0f", $2 / 1048576 }')" >>"$WORK/results"
	printf '%s\tdisk\t%s\n' "$name" "$(du -sm "$dir" | cut -f1)" >>"$WORK/results"
}

: >"$WORK/results"
echo "N=$N SECS=$SECS SETTLE=$SETTLE CLIENTS=$CLIENTS PIPELINES=\"$PIPELINES\" FSYNC=$FSYNC TESTS=$TESTS"
echo "redis: $(redis-server --version | cut -d' ' -f3), basalt: $BASALT_VERSION, $(nproc) cores"
start_redis "$FSYNC"
measure redis "$REDIS_PORT" "$REDIS_PID" "$WORK/redis-$FSYNC"
stop "$REDIS_PID"
start_basalt "$FSYNC"
measure basalt "$BASALT_PORT" "$BASALT_PID" "$WORK/basalt-$FSYNC/data"
stop "$BASALT_PID"

get() { awk -F'\t' -v n="$1" -v w="$2" '$1 == n && $2 == w { print $3 }' "$WORK/results"; }
row() {
	local r b ratio=n/a
	r=$(get redis "$1")
	b=$(get basalt "$1")
	if [ -n "$r" ] && [ -n "$b" ] && [ "$r" != 0 ]; then
		ratio=$(awk -v a="$b" -v b="$r" 'BEGIN { printf "%.2f", a / b }')
	fi
	echo "| $2 | ${r:-n/a} | ${b:-n/a} | $ratio |"
}
echo
echo "| measure | redis | basalt | basalt/redis |"
echo "|---|---:|---:|---:|"
row card "ZCARD after the load"
row load "load, members/s (ZADD of 100, 4 connections, -P 16)"
for p in $PIPELINES; do
	IFS=, read -ra all <<<"$TESTS"
	for t in "${all[@]}"; do
		row "$t P$p" "$t ops/s, -c $CLIENTS -P $p"
	done
done
row rss "RSS after the tests, MB"
row used_memory "INFO used_memory, MB"
row disk "data directory, MB"
echo "total time: $((SECONDS - start)) s" >&2
