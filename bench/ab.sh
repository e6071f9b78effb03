#!/usr/bin/env bash
# A/B of two basalt builds (or one build with two settings), rounds
# alternating the two on the same machine: the way to tell whether a change
# to the write path pays when the machine is shared and noisy. Prints each
# run's requests/s and server CPU per request (utime+stime of the server
# process from /proc, in us), then the medians and the ratios B/A. CPU per
# request is the steadier figure when other work shares the machine.
#
#   A=/tmp/basalt-main B=/tmp/basalt-branch T=set bench/ab.sh
#   A=/tmp/basalt EB=GOGC=400 T=evalsha P=1 R=7 bench/ab.sh
#
# Environment: A, B (binaries; B defaults to A), FA, FB (extra flags), EA,
# EB (extra environment, NAME=VALUE ...), T (a redis-benchmark -t test, or
# evalsha: bench/run.sh's five-command script), CMD (a command to send
# instead, as redis-benchmark takes it), P=16, N=100000 requests a
# run, R=5 rounds, CLIENTS=50, KEYSPACE=100000. Both servers run
# appendfsync always in temporary directories, on ports from 21000 up.
set -euo pipefail

A=${A:?A=basalt binary}
B=${B:-$A}
T=${T:-set}
P=${P:-16}
N=${N:-100000}
R=${R:-5}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-100000}

WORK=$(mktemp -d /tmp/basalt-ab.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

start() { # start NAME BIN PORT FLAGS ENV
	mkdir -p "$WORK/$1"
	# shellcheck disable=SC2086
	env $5 "$2" --port "$3" --dir "$WORK/$1" --appendfsync always $4 >"$WORK/$1.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 50); do
		redis-cli -p "$3" ping >/dev/null 2>&1 && return
		sleep 0.1
	done
	echo "basalt $1 did not start:" >&2
	cat "$WORK/$1.log" >&2
	exit 1
}
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }

port=$((21000 + RANDOM % 5000))
start a "$A" "$port" "${FA:-}" "${EA:-}"
start b "$B" $((port + 1)) "${FB:-}" "${EB:-}"

# The evalsha test's script, as in bench/run.sh.
SCRIPT="local n = redis.call('HINCRBY', KEYS[1], 'n', ARGV[1])
redis.call('SET', KEYS[1] .. ':last', n)
local v = redis.call('GET', KEYS[1] .. ':last')
redis.call('EXPIRE', KEYS[1], 3600)
redis.call('HGET', KEYS[1], 'n')
return v"
if [ "$T" = evalsha ]; then
	for p in "$port" $((port + 1)); do
		sha=$(redis-cli -p "$p" script load "$SCRIPT")
	done
fi

hz=$(getconf CLK_TCK)
for round in $(seq "$R"); do
	for s in a b; do
		p=$port pid=${pids[0]}
		[ "$s" = b ] && p=$((port + 1)) pid=${pids[1]}
		t0=$(ticks "$pid")
		if [ -n "${CMD:-}" ]; then
			read -ra what <<<"$CMD"
		elif [ "$T" = evalsha ]; then
			what=(EVALSHA "$sha" 1 "bench:e:__rand_int__" 1)
		else
			what=(-t "$T")
		fi
		# A timeout: redis-benchmark spins forever if a server goes away.
		rps=$(timeout 300 redis-benchmark -p "$p" -c "$CLIENTS" -r "$KEYSPACE" -n "$N" -P "$P" --csv "${what[@]}" |
			tail -1 | cut -d, -f2 | tr -d '"')
		t1=$(ticks "$pid")
		case $rps in
		"" | *[!0-9.]*) echo "redis-benchmark gave no rate for $s (T=$T CMD=${CMD:-})" >&2; exit 1 ;;
		esac
		echo "$s $rps $(echo "scale=2; ($t1 - $t0) * 1000000 / $hz / $N" | bc)" >>"$WORK/results"
		echo "round $round/$R $s: $rps requests/s" >&2
	done
done

column() { awk -v s="$1" -v c="$2" '$1 == s { print $c }' "$WORK/results" | sort -n; }
median() { column "$1" "$2" | sed -n "$(((R + 1) / 2))p"; }
for s in a b; do
	echo "$s: requests/s $(column "$s" 2 | tr '\n' ' ')| CPU us/request $(column "$s" 3 | tr '\n' ' ')"
done
echo "T=${CMD:-$T} P=$P N=$N R=$R medians: requests/s A $(median a 2) B $(median b 2) B/A $(echo "scale=3; $(median b 2) / $(median a 2)" | bc);" \
	"CPU us/request A $(median a 3) B $(median b 3) B/A $(echo "scale=3; $(median b 3) / $(median a 3)" | bc)"
