#!/usr/bin/env bash
# JSON commands on a 2 KB document, basalt alone (Debian's redis-server has
# no RedisJSON module to compare with): redis-benchmark runs
#
#   JSON.NUMINCRBY event_state:{e1} "$.sections['A-1'].stats.available" -1
#   JSON.GET event_state:{e1} $
#
# with -P 1 and -P 16 and prints the median requests per second of ROUNDS
# runs as a markdown table. For scale, the same table has SET and GET of
# one string key holding a value of the document's size (-d), on the same
# server: what any write or read of that many bytes costs.
#
#   bench/json.sh
#   ROUNDS=5 N=200000 FSYNC=everysec bench/json.sh
#
# Environment: N=100000 requests per run, ROUNDS=3, PIPELINES="1 16",
# CLIENTS=50, FSYNC=always (basalt's --appendfsync), REV / BASALT_BIN / KEEP
# as in bench/run.sh.
set -euo pipefail

N=${N:-100000}
ROUNDS=${ROUNDS:-3}
PIPELINES=${PIPELINES:-"1 16"}
CLIENTS=${CLIENTS:-50}
FSYNC=${FSYNC:-always}

. "$(dirname "$0")/lib.sh"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

KEY='event_state:{e1}'
INCR_PATH="\$.sections['A-1'].stats.available"

# doc prints a seat map of about 2 KB: 24 sections (A-1..C-8) with their
# counters, the shape of internal/jsondoc's benchmark document.
doc() {
	local s out='{"event":"e1","venue":"Main Hall","sections":{'
	for s in $(seq 0 23); do
		[ "$s" = 0 ] || out+=','
		out+="\"$(printf '%s-%d' "$(echo ABC | cut -c$((s / 8 + 1)))" $((s % 8 + 1)))\":"
		out+='{"stats":{"available":100,"sold":0,"held":0},"price":49.5,"rows":["r1","r2"]}'
	done
	echo "$out}}"
}

build_basalt
start_basalt "$FSYNC"
redis-cli -p "$BASALT_PORT" JSON.SET "$KEY" '$' "$(doc)" >/dev/null
size=$(redis-cli -p "$BASALT_PORT" JSON.GET "$KEY" | wc -c)
check=$(redis-cli -p "$BASALT_PORT" JSON.NUMINCRBY "$KEY" "$INCR_PATH" -1)
if [ "$check" != "[99]" ]; then
	echo "unexpected NUMINCRBY reply: $check" >&2
	exit 1
fi

# rps ARGS...: requests per second of one redis-benchmark run.
rps() {
	redis-benchmark -p "$BASALT_PORT" -n "$N" -c "$CLIENTS" --csv "$@" |
		awk -F'","' 'NR == 2 { gsub(/"/, "", $2); print $2 }'
}

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "basalt $BASALT_VERSION, appendfsync $FSYNC, document $size bytes, N=$N, -c $CLIENTS, median of $ROUNDS"
echo
echo "| command | -P | requests/s |"
echo "|---|---:|---:|"
for p in $PIPELINES; do
	incr=() get=() set=() sget=()
	for _ in $(seq 1 "$ROUNDS"); do
		incr+=("$(rps -P "$p" JSON.NUMINCRBY "$KEY" "$INCR_PATH" -1)")
		get+=("$(rps -P "$p" JSON.GET "$KEY" '$')")
		set+=("$(rps -P "$p" -d "$size" -t set)")
		sget+=("$(rps -P "$p" -d "$size" -t get)")
	done
	echo "| JSON.NUMINCRBY $KEY \"$INCR_PATH\" -1 | $p | $(printf '%s\n' "${incr[@]}" | median) |"
	echo "| JSON.GET $KEY \$ | $p | $(printf '%s\n' "${get[@]}" | median) |"
	echo "| SET key:__rand_int__ (one key, $size-byte value) | $p | $(printf '%s\n' "${set[@]}" | median) |"
	echo "| GET key:__rand_int__ (one key, $size-byte value) | $p | $(printf '%s\n' "${sget[@]}" | median) |"
done
