#!/usr/bin/env bash
# JSON commands on a 2 KB document, basalt alone (Debian's redis-server has
# no RedisJSON module to compare with): redis-benchmark runs
#
#   JSON.NUMINCRBY event_state:{e1} "$.sections['A-1'].stats.available" -1
#   JSON.GET event_state:{e1} $
#
# with -P 1 and -P 16 and prints the median requests per second of ROUNDS
# runs as a markdown table.
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

# doc prints a seat map of about 2 KB: 16 sections with their counters.
doc() {
	local s out='{"event":"e1","venue":"Main Hall","sections":{'
	for s in $(seq 1 16); do
		[ "$s" = 1 ] || out+=','
		out+="\"$(printf '%s-%d' "$( [ "$s" -le 8 ] && echo A || echo B)" $(( (s - 1) % 8 + 1 )))\":"
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
	incr=() get=()
	for _ in $(seq 1 "$ROUNDS"); do
		incr+=("$(rps -P "$p" JSON.NUMINCRBY "$KEY" "$INCR_PATH" -1)")
		get+=("$(rps -P "$p" JSON.GET "$KEY" '$')")
	done
	echo "| JSON.NUMINCRBY $INCR_PATH -1 | $p | $(printf '%s\n' "${incr[@]}" | median) |"
	echo "| JSON.GET \$ | $p | $(printf '%s\n' "${get[@]}" | median) |"
done
