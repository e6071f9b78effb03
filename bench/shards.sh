#!/usr/bin/env bash
# Sharding benchmark: redis-benchmark SET, GET, INCR and HSET against
#   redis     redis-server, appendonly yes, appendfsync always
#   node      basalt without cluster mode (one Raft group)
#   shards=N  basalt with --cluster-enabled yes --cluster-shards N on one
#             node (N from SHARDS: 1, 2, 4, 8 up to the machine's cores)
#   nodes=N   for each N in NODES, N basalt nodes in cluster mode with N
#             shards of 3 replicas (cluster-replicas' default), one led by
#             each (redis-benchmark --cluster); node i pinned to the i-th
#             list of NODE_CPUS if set, else all on SERVER_CPUS
# at each pipeline depth of PIPELINES with CLIENTS clients, all with
# appendfsync always. Prints requests/s and the servers' CPU per request
# (µs, user+system from /proc). Plain redis-benchmark against one node: it
# refuses --cluster for a cluster of one node, and every slot is served there.
#
#   bench/shards.sh
#   SHARDS="1 2 4 8" SERVER_CPUS=0-7 CLIENT_CPUS=8-15 THREADS=4 NODES=3 bench/shards.sh
#   SHARDS=" " NODES="3 5" NODE_CPUS="0-1 2-3 4-5 6-7 8-9" CLIENT_CPUS=10-15 bench/shards.sh
#
# Environment: N=100000 requests (N1: at -P 1, default N), CLIENTS=50,
# KEYSPACE=100000 (-r), TESTS=set,get,incr,hset, PIPELINES="16 1",
# THREADS (redis-benchmark --threads at -P 16, for rates one client
# thread cannot make; it rounds the time to 250 ms, so take N large), SERVER_CPUS and CLIENT_CPUS (taskset lists; none by default),
# REV, BASALT_BIN, KEEP as in run.sh.
set -euo pipefail

N=${N:-100000}
N1=${N1:-$N}
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

# start NAME PORT command...: start a server on PORT, on CPUS (default
# SERVER_CPUS); adds its pid to SERVERS.
start() {
	local name=$1 port=$2
	shift 2
	mkdir -p "$WORK/$name"
	(pin "${CPUS-${SERVER_CPUS:-}}" "$@" --port "$port" --bind 127.0.0.1 --dir "$WORK/$name" >"$WORK/$name.log" 2>&1) &
	PIDS+=("$!")
	SERVERS+=("$!")
	wait_ready "$port" "$!"
}

servers_ticks() { # the CPU ticks of every pid in SERVERS
	local pid sum=0
	for pid in "${SERVERS[@]}"; do sum=$((sum + $(cpu_ticks "$pid"))); done
	echo "$sum"
}

stop_servers() {
	local pid
	for pid in "${SERVERS[@]}"; do stop "$pid"; done
	SERVERS=()
}

# measure NAME [redis-benchmark flags...]: every test at every pipeline
# depth against PORT, CPU summed over SERVERS.
measure() {
	local name=$1 p t n threads out rps before after
	shift
	for p in $PIPELINES; do
		n=$N threads=${THREADS:-}
		[ "$p" = 1 ] && n=$N1 threads=""
		for t in ${TESTS//,/ }; do
			before=$(servers_ticks)
			(pin "${CLIENT_CPUS:-}" redis-benchmark -p "$PORT" -t "$t" -n "$n" -c "$CLIENTS" -P "$p" -r "$KEYSPACE" \
				${threads:+--threads "$threads"} "$@" -q) >"$WORK/bench.out" 2>&1 || true
			after=$(servers_ticks)
			if ! out=$(tr '\r' '\n' <"$WORK/bench.out" | grep 'requests per second' | tail -1); then
				echo "$name P=$p $t: redis-benchmark failed: $(tr '\r' '\n' <"$WORK/bench.out" | grep -v '^ *$' | tail -3)"
				continue
			fi
			rps=$(echo "$out" | awk '{ print $2 }')
			awk -v name="$name" -v p="$p" -v t="$t" -v rps="$rps" -v ticks=$((after - before)) -v hz="$(getconf CLK_TCK)" -v n="$n" \
				'BEGIN { printf "%-10s P=%-3s %-5s %12s req/s %8.1f µs CPU/req\n", name, p, t, rps, ticks * 1e6 / hz / n }'
		done
	done
}

SERVERS=()
echo "basalt $BASALT_VERSION, $(nproc) cores, N=$N N1=$N1 -c $CLIENTS -r $KEYSPACE ${THREADS:+--threads $THREADS}, server CPUs ${SERVER_CPUS:-any}, client CPUs ${CLIENT_CPUS:-any}"
PORT=$(free_port)
start redis "$PORT" redis-server --appendonly yes --appendfsync always --save "" --daemonize no
measure redis
stop_servers
PORT=$(free_port)
start node "$PORT" "$WORK/basalt" --appendfsync always
measure node
stop_servers
for n in $SHARDS; do
	PORT=$(free_port)
	start "shards$n" "$PORT" "$WORK/basalt" --appendfsync always --cluster-enabled yes --cluster-shards "$n"
	measure "shards=$n"
	stop_servers
done
read -ra node_cpus <<<"${NODE_CPUS:-}"
for nodes in ${NODES:-}; do
	members=() ports=()
	for id in $(seq 1 "$nodes"); do
		ports[$id]=$(free_port)
		members+=("$id=127.0.0.1:$(free_port)")
	done
	cluster=$(IFS=,; echo "${members[*]}")
	for id in $(seq 1 "$nodes"); do
		CPUS=${node_cpus[$((id - 1))]:-${SERVER_CPUS:-}} start "node$id" "${ports[$id]}" "$WORK/basalt" --appendfsync always \
			--cluster-enabled yes --cluster-shards "$nodes" \
			--node-id "$id" --raft-addr "${members[$((id - 1))]#*=}" --initial-cluster "$cluster"
	done
	PORT=${ports[1]}
	for _ in $(seq 1 200); do # until each node leads its shard (redis-benchmark --cluster stops at a move)
		[ "$(redis-cli -p "$PORT" cluster nodes | awk '$3 ~ /master/ && NF > 8' | wc -l)" = "$nodes" ] && break
		sleep 0.1
	done
	measure "nodes=$nodes" --cluster
	stop_servers
done
