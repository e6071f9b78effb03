#!/usr/bin/env bash
# The cost of keyspace notifications: SET and LPUSH throughput
# (redis-benchmark -t set,lpush) on redis-server 7 and basalt, each with
# notify-keyspace-events off (the default) and with "KEA" and one
# subscriber (redis-cli PSUBSCRIBE '__key*__:*', output to /dev/null)
# receiving every event. With BASE_REV, also a basalt built from that
# commit (notifications off): the cost of the hooks when they are off.
# Rounds alternate the servers. Prints a markdown table of median rps.
#
#   bench/notify.sh
#   BASE_REV=main ROUNDS=5 bench/notify.sh
#
# Environment: N=200000 requests a run, ROUNDS=3, PIPELINES="1 16",
# CLIENTS=50, KEYSPACE=100000, MODE=everysec (appendfsync of every
# server), BASE_REV, REV/BASALT_BIN/KEEP as in bench/run.sh.
set -euo pipefail

N=${N:-200000}
ROUNDS=${ROUNDS:-3}
PIPELINES=${PIPELINES:-"1 16"}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-100000}
MODE=${MODE:-everysec}

. "$(dirname "$0")/lib.sh"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

# start NAME BIN [flags...]: a basalt (BIN) or redis-server ("redis") in
# its own dir; sets PORT[NAME].
declare -A PORT
start() {
	local name=$1 bin=$2 port dir="$WORK/$1"
	shift 2
	mkdir -p "$dir"
	port=$(free_port)
	if [ "$bin" = redis ]; then
		redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --appendonly yes \
			--appendfsync "$MODE" --save "" --daemonize no --logfile "$dir/redis.log" "$@" &
	else
		"$bin" --port "$port" --bind 127.0.0.1 --dir "$dir/data" --appendfsync "$MODE" "$@" 2>"$dir/basalt.log" &
	fi
	PIDS+=($!)
	wait_ready "$port" "$!"
	PORT[$name]=$port
}

# subscribe NAME: a subscriber to every event on NAME's server.
subscribe() {
	redis-cli -p "${PORT[$1]}" psubscribe '__key*__:*' >/dev/null 2>&1 &
	PIDS+=($!)
	for _ in $(seq 1 100); do
		[ "$(redis-cli -p "${PORT[$1]}" pubsub numpat)" = 1 ] && return
		sleep 0.05
	done
}

# bench NAME P: one redis-benchmark run; records "name test P rps" lines.
bench() {
	redis-benchmark -h 127.0.0.1 -p "${PORT[$1]}" -c "$CLIENTS" -n "$N" -r "$KEYSPACE" -P "$2" \
		-t set,lpush --csv 2>/dev/null | tr -d '"' |
		awk -F, -v n="$1" -v p="$2" 'NR > 1 { printf "%s\t%s\t%s\t%s\n", n, $1, p, $2 }' >>"$WORK/results"
}

median() {
	awk -F'\t' -v n="$1" -v t="$2" -v p="$3" '$1 == n && $2 == t && $3 == p { print $4 }' "$WORK/results" |
		sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

build_basalt
cp "$WORK/basalt" "$WORK/basalt-new"
version=$BASALT_VERSION
names=(redis-off redis-on basalt-off basalt-on)
if [ -n "${BASE_REV:-}" ]; then
	REV=$BASE_REV BASALT_BIN= build_basalt
	cp "$WORK/basalt" "$WORK/basalt-base"
	base_version=$BASALT_VERSION
	names+=(base-off)
	start base-off "$WORK/basalt-base"
fi
echo "N=$N ROUNDS=$ROUNDS PIPELINES=\"$PIPELINES\" CLIENTS=$CLIENTS KEYSPACE=$KEYSPACE appendfsync $MODE"
echo "redis: $(redis-server --version | cut -d' ' -f3), basalt: $version${base_version:+, base: $base_version}, $(nproc) cores"
start redis-off redis
start redis-on redis --notify-keyspace-events KEA
start basalt-off "$WORK/basalt-new"
start basalt-on "$WORK/basalt-new" --notify-keyspace-events KEA
subscribe redis-on
subscribe basalt-on
: >"$WORK/results"
for r in $(seq 1 "$ROUNDS"); do
	for p in $PIPELINES; do
		order=("${names[@]}")
		[ $((r % 2)) = 1 ] || order=($(printf '%s\n' "${names[@]}" | tac))
		for n in "${order[@]}"; do
			echo "round $r/$ROUNDS, -P $p, $n" >&2
			bench "$n" "$p"
		done
	done
done
echo
echo "### Keyspace notifications (median of $ROUNDS rounds, requests/s)"
echo
header="| test | -P | redis off | redis KEA | basalt off | basalt KEA |"
sep="|---|---:|---:|---:|---:|---:|"
if [ -n "${BASE_REV:-}" ]; then
	header+=" basalt $base_version |"
	sep+="---:|"
fi
echo "$header"
echo "$sep"
for t in SET LPUSH; do
	for p in $PIPELINES; do
		line="| $t | $p |"
		for n in "${names[@]}"; do
			line+=" $(median "$n" "$t" "$p") |"
		done
		echo "$line"
	done
done
