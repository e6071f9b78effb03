#!/usr/bin/env bash
# Replication benchmark: redis-benchmark SET and GET against
#   redis     one redis-server, appendonly yes, appendfsync always
#   single    one basalt (a Raft group of one voter)
#   leader    the leader of a 3-node basalt cluster on loopback
#   follower  a follower of that cluster (commands forwarded to the leader)
# all with appendfsync always, rounds alternating the order; prints medians
# and the ratios to redis and to single-node basalt. Then the failover time
# (SIGKILL the leader -> first successful write) as a median over
# FAILOVER_RUNS runs, measured by test/cluster's TestFailover.
#
#   bench/cluster.sh
#   ROUNDS=5 P=16 REV=HEAD bench/cluster.sh
#
# Environment: N=100000 requests, ROUNDS=3, P=16 (-P), CLIENTS=50 (-c),
# KEYSPACE=100000 (-r), TESTS=set,get, FAILOVER_RUNS=10 (0: skip), REV,
# BASALT_BIN, KEEP as in bench/run.sh.
set -euo pipefail

N=${N:-100000}
ROUNDS=${ROUNDS:-3}
P=${P:-16}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-100000}
TESTS=${TESTS:-set,get}
FAILOVER_RUNS=${FAILOVER_RUNS:-10}

. "$(dirname "$0")/lib.sh"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

# start_node ID CLUSTER: one node of the cluster; sets NODE_PORT.
start_node() {
	local dir="$WORK/node$1"
	mkdir -p "$dir"
	NODE_PORT=${CLIENT_PORTS[$1]}
	"$WORK/basalt" --port "$NODE_PORT" --bind 127.0.0.1 --dir "$dir" --appendfsync always \
		--node-id "$1" --raft-addr "127.0.0.1:${RAFT_PORTS[$1]}" --initial-cluster "$2" 2>"$dir/basalt.log" &
	PIDS+=($!)
	wait_ready "$NODE_PORT" $!
}

# role PORT: the node's Raft role.
role() { redis-cli -p "$1" raft status | sed -n 's/^role://p' | tr -d '\r'; }

run() { # NAME PORT
	redis-benchmark -h 127.0.0.1 -p "$2" -c "$CLIENTS" -r "$KEYSPACE" -n "$N" -P "$P" --csv -t "$TESTS" 2>/dev/null |
		tr -d '"' | while IFS=, read -r test rps _; do
		[ "$test" = test ] || printf '%s\t%s\t%s\n' "$1" "$test" "$rps" >>"$WORK/results"
	done
}

median() { # NAME TEST
	awk -F'\t' -v n="$1" -v t="$2" '$1 == n && $2 == t { print $3 }' "$WORK/results" |
		sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

build_basalt
echo "N=$N ROUNDS=$ROUNDS P=$P CLIENTS=$CLIENTS KEYSPACE=$KEYSPACE TESTS=$TESTS"
echo "redis: $(redis-server --version | cut -d' ' -f3), basalt: $BASALT_VERSION, $(nproc) cores"
start_redis always
start_basalt always
CLIENT_PORTS=() RAFT_PORTS=() members=()
for id in 1 2 3; do
	CLIENT_PORTS[$id]=$(free_port)
	RAFT_PORTS[$id]=$(free_port)
	members+=("$id=127.0.0.1:${RAFT_PORTS[$id]}")
done
cluster=$(IFS=,; echo "${members[*]}")
for id in 1 2 3; do start_node "$id" "$cluster"; done
leader="" follower=""
for _ in $(seq 1 100); do
	for id in 1 2 3; do
		case $(role "${CLIENT_PORTS[$id]}") in
		leader) leader=${CLIENT_PORTS[$id]} ;;
		follower) follower=${CLIENT_PORTS[$id]} ;;
		esac
	done
	[ -n "$leader" ] && [ -n "$follower" ] && break
	leader="" follower=""
	sleep 0.1
done
[ -n "$leader" ] || { echo "the cluster elected no leader" >&2; exit 1; }

: >"$WORK/results"
targets=("redis $REDIS_PORT" "single $BASALT_PORT" "leader $leader" "follower $follower")
for r in $(seq 1 "$ROUNDS"); do
	echo "round $r/$ROUNDS" >&2
	# Rotate the order so a drifting machine favours no one.
	for i in 0 1 2 3; do
		read -r name port <<<"${targets[$(((i + r) % 4))]}"
		run "$name" "$port"
	done
done

echo
echo "### Replication, appendfsync always, -P $P -c $CLIENTS (median of $ROUNDS rounds, requests/s)"
echo
echo "| test | redis | basalt single | 3-node leader | 3-node via follower | leader/single | leader/redis |"
echo "|---|---:|---:|---:|---:|---:|---:|"
IFS=, read -ra all <<<"$TESTS"
for t in "${all[@]}"; do
	T=$(echo "$t" | tr a-z A-Z)
	rr=$(median redis "$T") sr=$(median single "$T") lr=$(median leader "$T") fr=$(median follower "$T")
	ls=$(awk -v a="$lr" -v b="$sr" 'BEGIN { printf "%.2f", a / b }')
	lrr=$(awk -v a="$lr" -v b="$rr" 'BEGIN { printf "%.2f", a / b }')
	echo "| $T | $rr | $sr | $lr | $fr | $ls | $lrr |"
done
echo
for pid in "${PIDS[@]}"; do stop "$pid"; done

if [ "$FAILOVER_RUNS" -gt 0 ]; then
	echo "failover, $FAILOVER_RUNS runs (test/cluster TestFailover):"
	(cd "$ROOT" && BASALT_BIN="$WORK/basalt" BASALT_FAILOVER_RUNS=$FAILOVER_RUNS \
		go test -count=1 -run 'TestFailover$' -v ./test/cluster 2>&1 | grep -E 'failover \(|FAIL|ok')
fi
