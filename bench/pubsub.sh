#!/usr/bin/env bash
# PUBLISH throughput, basalt against redis-server 7, measured by
# redis-benchmark (PUBLISH bench:ch <16-byte message>), rounds alternating
# the two servers. Two cases: no subscriber (the cost of PUBLISH itself) and
# one subscriber (redis-cli SUBSCRIBE, output to /dev/null) receiving every
# message. Prints a markdown table: median rps, ratio basalt/redis.
#
#   bench/pubsub.sh
#   ROUNDS=5 PIPELINES="1 16" N=200000 bench/pubsub.sh
#
# Environment: N=200000 requests a run, ROUNDS=3, PIPELINES="1 16",
# CLIENTS=50, REV/BASALT_BIN/KEEP as in bench/run.sh. PUBLISH writes
# nothing, so appendfsync does not matter; both run with "always".
set -euo pipefail

N=${N:-200000}
ROUNDS=${ROUNDS:-3}
PIPELINES=${PIPELINES:-"1 16"}
CLIENTS=${CLIENTS:-50}

. "$(dirname "$0")/lib.sh"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

# bench NAME PORT P CASE: one redis-benchmark run; records "name P case rps".
bench() {
	local name=$1 port=$2 p=$3 case=$4 sub= rps
	if [ "$case" = "1 subscriber" ]; then
		redis-cli -p "$port" subscribe bench:ch >/dev/null &
		sub=$!
		PIDS+=("$sub")
		for _ in $(seq 1 100); do
			[ "$(redis-cli -p "$port" pubsub numsub bench:ch | tail -1)" = 1 ] && break
			sleep 0.05
		done
	fi
	rps=$(redis-benchmark -h 127.0.0.1 -p "$port" -c "$CLIENTS" -n "$N" -P "$p" --csv \
		publish bench:ch 0123456789abcdef 2>/dev/null | tr -d '"' | awk -F, 'NR == 2 { print $2 }')
	[ -z "$sub" ] || stop "$sub" || true # redis-cli dies of the signal
	printf '%s\t%s\t%s\t%s\n' "$name" "$p" "$case" "$rps" >>"$WORK/results"
}

median() {
	awk -F'\t' -v n="$1" -v p="$2" -v t="$3" '$1 == n && $2 == p && $3 == t { print $4 }' "$WORK/results" |
		sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

build_basalt
echo "N=$N ROUNDS=$ROUNDS PIPELINES=\"$PIPELINES\" CLIENTS=$CLIENTS"
echo "redis: $(redis-server --version | cut -d' ' -f3), basalt: $BASALT_VERSION, $(nproc) cores"
start_redis always
start_basalt always
: >"$WORK/results"
cases=("no subscriber" "1 subscriber")
for r in $(seq 1 "$ROUNDS"); do
	for p in $PIPELINES; do
		for c in "${cases[@]}"; do
			echo "round $r/$ROUNDS, -P $p, $c" >&2
			if [ $((r % 2)) = 1 ]; then
				bench redis "$REDIS_PORT" "$p" "$c"
				bench basalt "$BASALT_PORT" "$p" "$c"
			else
				bench basalt "$BASALT_PORT" "$p" "$c"
				bench redis "$REDIS_PORT" "$p" "$c"
			fi
		done
	done
done
echo
echo "### PUBLISH (median of $ROUNDS rounds, requests/s)"
echo
echo "| case | -P | redis | basalt | basalt/redis |"
echo "|---|---:|---:|---:|---:|"
for p in $PIPELINES; do
	for c in "${cases[@]}"; do
		rr=$(median redis "$p" "$c")
		br=$(median basalt "$p" "$c")
		ratio=$(awk -v a="$br" -v b="$rr" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
		echo "| PUBLISH, $c | $p | $rr | $br | $ratio |"
	done
done
