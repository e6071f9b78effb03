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
#   A=/tmp/basalt-main B=/tmp/basalt-branch CMD="XADD s * f v" bench/ab.sh
#
# Environment: A, B (binaries; B defaults to A), FA, FB (extra flags), EA,
# EB (extra environment, NAME=VALUE ...), T (a redis-benchmark -t test, or
# evalsha or fcall: bench/run.sh's five-command script, or xreadgroup:
# bench/streamgroup's XREADGROUP+XACK pairs, N of them), CMD (a command to send
# instead, as redis-benchmark takes it), P=16, N=100000 requests a run,
# R=5 rounds, CLIENTS=50, KEYSPACE=100000. Both servers run appendfsync
# always in temporary directories.
set -euo pipefail

A=${A:?A=basalt binary}
B=${B:-$A}
T=${T:-set}
P=${P:-16}
N=${N:-100000}
R=${R:-5}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-100000}

. "$(dirname "$0")/lib.sh"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

ports=()
start() { # start NAME BIN FLAGS ENV
	local port
	port=$(free_port)
	mkdir -p "$WORK/$1"
	# shellcheck disable=SC2086
	env $4 "$2" --port "$port" --dir "$WORK/$1" --appendfsync always $3 >"$WORK/$1.log" 2>&1 &
	PIDS+=($!)
	ports+=("$port")
	for _ in $(seq 50); do
		redis-cli -p "$port" ping >/dev/null 2>&1 && return
		sleep 0.1
	done
	echo "basalt $1 did not start:" >&2
	cat "$WORK/$1.log" >&2
	exit 1
}
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }

start a "$A" "${FA:-}" "${EA:-}"
start b "$B" "${FB:-}" "${EB:-}"
if [ -n "${CMD:-}" ]; then
	read -ra what <<<"$CMD"
elif [ "$T" = evalsha ] || [ "$T" = fcall ]; then
	for port in "${ports[@]}"; do
		load_script "$port"
	done
	what=(EVALSHA "$EVAL_SHA" 1 "bench:e:__rand_int__" 1)
	[ "$T" = fcall ] && what=(FCALL bench_five 1 "bench:f:__rand_int__" 1)
elif [ "$T" = xreadgroup ]; then
	(cd "$ROOT" && go build -o "$WORK/streamgroup" ./bench/streamgroup) || exit 1
	for port in "${ports[@]}"; do
		"$WORK/streamgroup" -addr "127.0.0.1:$port" -prefill $((R * (N + CLIENTS * P) + 1000))
	done
else
	what=(-t "$T")
fi

# load PORT ROUND: one run's CSV line.
load() {
	if [ "$T" = xreadgroup ]; then
		timeout 300 "$WORK/streamgroup" -addr "127.0.0.1:$1" -group "g$2" -n "$N" -clients "$CLIENTS" -pipeline "$P"
	else
		# A timeout: redis-benchmark spins forever if a server goes away.
		timeout 300 redis-benchmark -p "$1" -c "$CLIENTS" -r "$KEYSPACE" -n "$N" -P "$P" --csv "${what[@]}" | tail -1
	fi
}

hz=$(getconf CLK_TCK)
for round in $(seq "$R"); do
	for i in 0 1; do
		s=$([ $i = 0 ] && echo a || echo b)
		t0=$(ticks "${PIDS[$i]}")
		rps=$(load "${ports[$i]}" "$round" | cut -d, -f2 | tr -d '"')
		t1=$(ticks "${PIDS[$i]}")
		case $rps in
		"" | *[!0-9.]*) echo "redis-benchmark gave no rate for $s" >&2; exit 1 ;;
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
echo "${what[*]:-$T} -P $P, N=$N, R=$R, medians: requests/s A $(median a 2) B $(median b 2) B/A $(echo "scale=3; $(median b 2) / $(median a 2)" | bc);" \
	"CPU us/request A $(median a 3) B $(median b 3) B/A $(echo "scale=3; $(median b 3) / $(median a 3)" | bc)"
