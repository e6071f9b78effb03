#!/usr/bin/env bash
# Reads and writes of structures that deletions have drained, basalt
# against redis-server 7 (appendfsync always both): a queue's acknowledged
# and trimmed stream entries, a hash that lost most of its fields, a sorted
# set popped from the front, a sliding-window limiter and a delayed-job
# queue on sorted sets, keys with short TTLs. In basalt what was deleted
# stays in Pebble as deletions until compacted; these are the workloads
# that met them (docs/benchmarks.md, session 8). Each case runs on a fresh
# pair of servers, basalt first; prints "case | redis | basalt | ratio".
#
#   bench/drained.sh
#   CASES="xautoclaim zpopmin" bench/drained.sh
#
# Environment: CASES (default all: xautoclaim xpending xrange xadd-maxlen
# xadd-maxlen-exact hscan zpopmin window delayed expiry), REV/BASALT_BIN/KEEP
# as in bench/run.sh.
set -euo pipefail

CASES=${CASES:-"xautoclaim xpending xrange xadd-maxlen xadd-maxlen-exact hscan zpopmin window delayed expiry"}

. "$(dirname "$0")/lib.sh"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM
build_basalt
(cd "$ROOT" && go build -o "$WORK/streamgroup" ./bench/streamgroup)

# rps PORT ARGS...: the rate of one redis-benchmark run.
rps() {
	local port=$1
	shift
	redis-benchmark -h 127.0.0.1 -p "$port" --csv "$@" 2>/dev/null | tr -d '"' | awk -F, 'NR == 2 { print $2 }'
}

# setup CASE PORT: the drained state; run CASE PORT: the measured rate.
setup() {
	local port=$2
	case $1 in
	xautoclaim | xpending | xrange)
		"$WORK/streamgroup" -addr "127.0.0.1:$port" -prefill 200000 >/dev/null
		"$WORK/streamgroup" -addr "127.0.0.1:$port" -group g1 -n 200000 -pipeline 16 >/dev/null
		[ "$1" != xrange ] || redis-cli -p "$port" xtrim bench:stream maxlen 10 >/dev/null
		;;
	hscan)
		redis-benchmark -p "$port" -c 50 -n 200000 -r 100000000 -P 16 hset h f:__rand_int__ v >/dev/null
		# The first 150,000 in scan order: those HSCAN 0 meets first.
		redis-cli -p "$port" hscan h 0 count 150000 | awk 'NR > 1 && NR % 2 == 0' | head -150000 |
			sed 's/^/HDEL h /' | redis-cli -p "$port" >/dev/null
		;;
	zpopmin | delayed)
		redis-benchmark -p "$port" -c 50 -n 200000 -r 100000000 -P 16 zadd z __rand_int__ m:__rand_int__ >/dev/null
		[ "$1" != zpopmin ] || redis-benchmark -p "$port" -c 50 -n 90000 -P 16 zpopmin z >/dev/null
		;;
	esac
}

run() {
	local port=$2 sha
	case $1 in
	xautoclaim) rps "$port" -c 10 -n 5000 xautoclaim bench:stream g1 c9 0 0-0 count 10 ;;
	xpending) rps "$port" -c 10 -n 5000 xpending bench:stream g1 - + 10 ;;
	xrange) rps "$port" -c 10 -n 5000 xrange bench:stream - + count 10 ;;
	xadd-maxlen) rps "$port" -c 50 -n 200000 -P 16 xadd q maxlen '~' 1000 '*' f v ;;
	xadd-maxlen-exact) rps "$port" -c 50 -n 200000 -P 16 xadd q maxlen 1000 '*' f v ;;
	hscan) rps "$port" -c 10 -n 5000 hscan h 0 ;;
	zpopmin) rps "$port" -c 50 -n 30000 -P 16 zpopmin z ;;
	window)
		sha=$(redis-cli -p "$port" script load "local t = redis.call('INCR', KEYS[2]) redis.call('ZADD', KEYS[1], t, t) redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', t - 100) return redis.call('ZCARD', KEYS[1])")
		rps "$port" -c 50 -n 50000 -P 16 evalsha "$sha" 2 rl ctr
		;;
	delayed)
		sha=$(redis-cli -p "$port" script load "local j = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1) if j[1] then redis.call('ZREM', KEYS[1], j[1]) end return j[1]")
		rps "$port" -c 50 -n 40000 -P 16 evalsha "$sha" 1 z 100000000
		;;
	expiry) # the last of six runs, and what active expiry left behind
		local i r
		for i in 1 2 3 4 5 6; do
			r=$(rps "$port" -c 50 -n 200000 -r 100000000 -P 16 set k:__rand_int__ v px 200)
		done
		echo "$r ($(redis-cli -p "$port" dbsize) keys)"
		;;
	esac
}

echo "redis: $(redis-server --version | awk '{ print $3 }'), basalt: $BASALT_VERSION, appendfsync always"
echo
echo "| case | redis | basalt | basalt/redis |"
echo "|---|---:|---:|---:|"
for c in $CASES; do
	start_basalt always
	setup "$c" "$BASALT_PORT"
	b=$(run "$c" "$BASALT_PORT")
	stop "$BASALT_PID"
	start_redis always
	setup "$c" "$REDIS_PORT"
	r=$(run "$c" "$REDIS_PORT")
	stop "$REDIS_PID"
	rm -rf "$WORK/basalt-always" "$WORK/redis-always" # the next case starts empty
	echo "| $c | $r | $b | $(awk -v b="${b%% *}" -v r="${r%% *}" 'BEGIN { if (r > 0) printf "%.2f", b / r; else print "n/a" }') |"
done
