#!/usr/bin/env bash
# Stream throughput, basalt against redis-server 7 side by side (same
# durability), rounds alternating the two servers; prints the median rps
# and the ratio basalt/redis per test and pipeline depth.
#
#   bench/streams.sh
#   ROUNDS=5 PIPELINES="1 16" MODES=always bench/streams.sh
#
# Tests:
#   XADD             redis-benchmark: XADD bench:s * field value (one stream)
#   XREADGROUP+XACK  bench/streamgroup: clients read one entry at a time
#                    with XREADGROUP GROUP g cN COUNT 1 STREAMS bench:stream >
#                    then XACK it; -P reads, then -P acks, per round trip.
#                    Each run reads a prefilled stream with a new group.
#
# The CPU column of XREADGROUP+XACK is per pair, like its rate.
#
# Environment: N=100000 (XADD requests), GROUP_N=50000 (read+ack pairs),
# ROUNDS=3, PIPELINES="1 16", CLIENTS=50, MODES="always", KEEP=1, REV, BASALT_BIN
# (as bench/run.sh).
set -euo pipefail

N=${N:-100000}
GROUP_N=${GROUP_N:-50000}
ROUNDS=${ROUNDS:-3}
PIPELINES=${PIPELINES:-"1 16"}
CLIENTS=${CLIENTS:-50}
MODES=${MODES:-always}

. "$(dirname "$0")/lib.sh"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

echo "building bench/streamgroup" >&2
(cd "$ROOT" && go build -o "$WORK/streamgroup" ./bench/streamgroup) || exit 1

# bench NAME PORT P ROUND: one XADD run and one XREADGROUP+XACK run.
bench() {
	local name=$1 port=$2 p=$3 round=$4 pid before after rps
	pid=$(server_pid "$name")
	before=$(cpu_ticks "$pid")
	rps=$(redis-benchmark -h 127.0.0.1 -p "$port" -c "$CLIENTS" -n "$N" -P "$p" --csv \
		XADD bench:s '*' field value 2>/dev/null | tr -d '"' | awk -F, '$1 != "test" { print $2 }')
	after=$(cpu_ticks "$pid")
	add_result "$name" "$p" XADD "$rps" $((after - before)) "$N"
	before=$after
	rps=$("$WORK/streamgroup" -addr "127.0.0.1:$port" -group "g-$round-$p" -n "$GROUP_N" \
		-clients "$CLIENTS" -pipeline "$p" | cut -d, -f2)
	after=$(cpu_ticks "$pid")
	add_result "$name" "$p" XREADGROUP+XACK "$rps" $((after - before)) "$GROUP_N"
}

build_basalt
start=$SECONDS

prefill=$((GROUP_N + CLIENTS * 16 + 1000))
echo "N=$N GROUP_N=$GROUP_N ROUNDS=$ROUNDS PIPELINES=\"$PIPELINES\" CLIENTS=$CLIENTS"
echo "redis: $(redis-server --version | cut -d' ' -f3), basalt: $BASALT_VERSION, $(nproc) cores"
for MODE in $MODES; do
	start_redis "$MODE"
	start_basalt "$MODE"
	for port in "$REDIS_PORT" "$BASALT_PORT"; do
		"$WORK/streamgroup" -addr "127.0.0.1:$port" -prefill "$prefill"
	done
	: >"$WORK/results-$MODE"
	for r in $(seq 1 "$ROUNDS"); do
		for p in $PIPELINES; do
			echo "appendfsync $MODE, round $r/$ROUNDS, -P $p" >&2
			if [ $((r % 2)) = 1 ]; then
				bench redis "$REDIS_PORT" "$p" "$r"
				bench basalt "$BASALT_PORT" "$p" "$r"
			else
				bench basalt "$BASALT_PORT" "$p" "$r"
				bench redis "$REDIS_PORT" "$p" "$r"
			fi
		done
	done
	stop "$REDIS_PID"
	stop "$BASALT_PID"

	echo
	echo "### streams, appendfsync $MODE (median of $ROUNDS rounds, requests/s)"
	echo
	side_by_side XADD XREADGROUP+XACK
	echo
done
echo "total time: $((SECONDS - start)) s" >&2
