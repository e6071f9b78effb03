#!/usr/bin/env bash
# CPU profiles of basalt under redis-benchmark loads, through basalt's
# --pprof flag (net/http/pprof on loopback).
#
#   bench/profile.sh                       # the three default loads
#   LOADS="get:16" SECS=20 bench/profile.sh
#
# Environment:
#   LOADS="set:16 get:16 set:1"   test:pipeline pairs, one profile each
#   FSYNC=always      basalt's appendfsync
#   SECS=10           profile duration per load
#   CLIENTS=50 KEYSPACE=100000
#   OUT=bench/profiles  where the profiles (*.pprof) and top lists go
#   TOP=25            lines of `go tool pprof -top` printed per profile
#   REV=HEAD          build basalt from this commit instead of the working tree
#   BASALT_BIN=PATH   benchmark this prebuilt basalt binary instead
set -euo pipefail

LOADS=${LOADS:-"set:16 get:16 set:1"}
FSYNC=${FSYNC:-always}
SECS=${SECS:-10}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-100000}
TOP=${TOP:-25}

. "$(dirname "$0")/lib.sh"
OUT=${OUT:-$ROOT/bench/profiles}
LOADPID=
cleanup() {
	[ -z "$LOADPID" ] || { kill "$LOADPID" 2>/dev/null; wait "$LOADPID" 2>/dev/null || true; }
	bench_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$OUT"

build_basalt
for load in $LOADS; do
	test=${load%%:*}
	p=${load##*:}
	pport=$(free_port)
	start_basalt "$FSYNC" --pprof "127.0.0.1:$pport"
	# GET needs keys to find: fill the key space first.
	redis-benchmark -p "$BASALT_PORT" -c "$CLIENTS" -r "$KEYSPACE" -n "$KEYSPACE" -P 16 -t set -q >/dev/null
	# The load runs longer than the profile and is stopped afterwards.
	redis-benchmark -p "$BASALT_PORT" -c "$CLIENTS" -r "$KEYSPACE" -n 1000000000 -P "$p" -t "$test" -q \
		>"$WORK/load.out" 2>&1 &
	LOADPID=$!
	sleep 1 # past connection setup
	name="$test-P$p-$FSYNC"
	echo "profiling $name for ${SECS}s" >&2
	curl -sf -o "$OUT/$name.pprof" "http://127.0.0.1:$pport/debug/pprof/profile?seconds=$SECS"
	kill "$LOADPID" 2>/dev/null
	wait "$LOADPID" 2>/dev/null || true
	LOADPID=
	# redis-benchmark's last progress line: the load's throughput.
	echo "== $name ($(tr '\r' '\n' <"$WORK/load.out" | grep -a 'requests per second\|rps=' | tail -1 | sed 's/^ *//'))"
	go tool pprof -top -nodecount="$TOP" "$WORK/basalt" "$OUT/$name.pprof" 2>/dev/null | tee "$OUT/$name.top" | sed -n '1,'"$((TOP + 6))"'p'
	stop "$BASALT_PID"
done
