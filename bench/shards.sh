#!/usr/bin/env bash
# Sharding benchmark: redis-benchmark SET, GET, INCR and HSET against
#   redis     redis-server, appendonly yes, appendfsync always
#   node      basalt without cluster mode (one Raft group)
#   shards=N  basalt with --cluster-enabled yes --cluster-shards N on one
#             node (N from SHARDS: 1, 2, 4, 8 up to the machine's cores)
# at each pipeline depth of PIPELINES with CLIENTS clients, all with
# appendfsync always. Prints requests/s and the server's CPU per request
# (µs, user+system from /proc). Plain redis-benchmark, not --cluster: it
# refuses a cluster of one node, and every slot is served here.
#
#   bench/shards.sh
#   SHARDS="1 2 4 8" SERVER_CPUS=0-7 CLIENT_CPUS=8-15 bench/shards.sh
#
# Environment: N=100000 requests, CLIENTS=50, KEYSPACE=100000 (-r),
# TESTS=set,get,incr,hset, PIPELINES="16 1", SERVER_CPUS and CLIENT_CPUS
# (taskset lists; none by default), REV, BASALT_BIN, KEEP as in run.sh.
set -euo pipefail

N=${N:-100000}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-100000}
TESTS=${TESTS:-set,get,incr,hset}
PIPELINES=${PIPELINES:-16 1}
if [ -z "${SHARDS:-}" ]; then
	SHARDS=""
	for n in 1 2 4 8; do [ "$n" -le "$(nproc)" ] && SHARDS+="$n "; done
fi

. "$(dirname "$0")/lib.sh"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM
build_basalt

pin() { # pin CPUS command...: become command, under taskset when CPUS is set
	local cpus=$1
	shift
	if [ -n "$cpus" ]; then exec taskset -c "$cpus" "$@"; else exec "$@"; fi
}

# start NAME command...: start a server on a free port; sets PORT and PID.
start() {
	local name=$1
	shift
	PORT=$(free_port)
	mkdir -p "$WORK/$name"
	(pin "${SERVER_CPUS:-}" "$@" --port "$PORT" --bind 127.0.0.1 --dir "$WORK/$name" >"$WORK/$name.log" 2>&1) &
	PID=$!
	PIDS+=("$PID")
	wait_ready "$PORT" "$PID"
}

# measure NAME: every test at every pipeline depth against PORT/PID.
measure() {
	local p t out rps before after hz
	hz=$(getconf CLK_TCK)
	for p in $PIPELINES; do
		for t in ${TESTS//,/ }; do
			before=$(cpu_ticks "$PID")
			out=$( (pin "${CLIENT_CPUS:-}" redis-benchmark -p "$PORT" -t "$t" -n "$N" -c "$CLIENTS" -P "$p" -r "$KEYSPACE" -q 2>/dev/null) | tr '\r' '\n' | grep 'requests per second' | tail -1)
			after=$(cpu_ticks "$PID")
			rps=$(echo "$out" | awk '{ print $2 }')
			printf '%-10s P=%-3s %-5s %12s req/s %8.1f µs CPU/req\n' "$1" "$p" "$t" "$rps" \
				"$(echo "($after - $before) * 1000000 / $hz / $N" | bc -l)"
		done
	done
}

echo "basalt $BASALT_VERSION, $(nproc) cores, N=$N -c $CLIENTS -r $KEYSPACE, server CPUs ${SERVER_CPUS:-any}, client CPUs ${CLIENT_CPUS:-any}"
start redis redis-server --appendonly yes --appendfsync always --save "" --daemonize no
measure redis
stop "$PID"
start node "$WORK/basalt" --appendfsync always
measure node
stop "$PID"
for n in $SHARDS; do
	start "shards$n" "$WORK/basalt" --appendfsync always --cluster-enabled yes --cluster-shards "$n"
	measure "shards=$n"
	stop "$PID"
done
