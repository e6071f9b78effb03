# Shared helpers of the bench scripts: build basalt, start
# basalt and redis-server on free loopback ports in temp dirs, stop them by
# pid. Source it; it sets WORK (a temp dir removed by bench_cleanup).

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/basalt-bench.XXXXXX")
PIDS=()

# The script of the evalsha tests (run.sh, ab.sh): five commands on one
# key and a second.
EVAL_SCRIPT="local n = redis.call('HINCRBY', KEYS[1], 'n', ARGV[1])
redis.call('SET', KEYS[1] .. ':last', n)
local v = redis.call('GET', KEYS[1] .. ':last')
redis.call('EXPIRE', KEYS[1], 3600)
redis.call('HGET', KEYS[1], 'n')
return v"
EVAL_SHA=$(printf '%s' "$EVAL_SCRIPT" | sha1sum | cut -d' ' -f1)

# The library of the fcall tests: the same five commands as a function.
FCALL_LIBRARY="#!lua name=benchlib
redis.register_function('bench_five', function(keys, args)
$(printf '%s' "$EVAL_SCRIPT" | sed 's/KEYS\[/keys[/g; s/ARGV\[/args[/g')
end)"

# load_script PORT: SCRIPT LOAD the evalsha tests' script, FUNCTION LOAD
# the fcall tests' library.
load_script() {
	if [ "$(redis-cli -p "$1" script load "$EVAL_SCRIPT")" != "$EVAL_SHA" ] ||
		[ "$(redis-cli -p "$1" function load replace "$FCALL_LIBRARY")" != benchlib ]; then
		echo "SCRIPT LOAD or FUNCTION LOAD on port $1 failed" >&2
		exit 1
	fi
}

bench_cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	PIDS=()
	[ -n "${KEEP:-}" ] || rm -rf "$WORK"
}

# free_port prints a TCP port nothing listens on: ask the kernel for an
# ephemeral one, or probe from a random start if python3 is missing.
free_port() {
	if command -v python3 >/dev/null; then
		python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
		return
	fi
	local p=$((20000 + RANDOM % 20000))
	while (echo >/dev/tcp/127.0.0.1/$p) 2>/dev/null; do p=$((p + 1)); done
	echo $p
}

# build_basalt builds ./cmd/basalt from the working tree, or from the commit
# REV names (REV=HEAD: what is committed, whatever others have half-edited
# in a shared tree), or use the binary BASALT_BIN. Sets BASALT_VERSION.
build_basalt() {
	local src=$ROOT
	if [ -n "${BASALT_BIN:-}" ]; then # a prebuilt binary, e.g. an experiment
		cp "$BASALT_BIN" "$WORK/basalt"
		BASALT_VERSION="$BASALT_BIN"
		return
	fi
	if [ -n "${REV:-}" ]; then
		src=$WORK/src
		mkdir -p "$src"
		(cd "$ROOT" && git archive "$REV") | tar -x -C "$src" || exit 1
		BASALT_VERSION=$(cd "$ROOT" && git rev-parse --short "$REV")
	else
		BASALT_VERSION=$(cd "$ROOT" && git rev-parse --short HEAD)
		(cd "$ROOT" && git diff --quiet HEAD -- cmd internal go.mod go.sum) || BASALT_VERSION+="+worktree"
	fi
	echo "building basalt $BASALT_VERSION" >&2
	(cd "$src" && go build -o "$WORK/basalt" ./cmd/basalt) || exit 1
}

# wait_ready PORT PID: until the server accepts connections (or dies). Not
# PING: basalt may not have it yet, and both listen only once loaded.
wait_ready() {
	local i
	for i in $(seq 1 200); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
			return 0
		fi
		kill -0 "$2" 2>/dev/null || break
		sleep 0.05
	done
	echo "server on port $1 did not start" >&2
	exit 1
}

# start_redis FSYNC: sets REDIS_PORT and REDIS_PID.
start_redis() {
	local dir="$WORK/redis-$1"
	mkdir -p "$dir"
	REDIS_PORT=$(free_port)
	redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$dir" \
		--appendonly yes --appendfsync "$1" --save "" --daemonize no \
		--logfile "$dir/redis.log" &
	REDIS_PID=$!
	PIDS+=("$REDIS_PID")
	wait_ready "$REDIS_PORT" "$REDIS_PID"
}

# start_basalt FSYNC [extra flags...]: sets BASALT_PORT and BASALT_PID.
start_basalt() {
	local fsync=$1
	shift
	local dir="$WORK/basalt-$fsync"
	mkdir -p "$dir"
	BASALT_PORT=$(free_port)
	"$WORK/basalt" --port "$BASALT_PORT" --bind 127.0.0.1 --dir "$dir/data" \
		--appendfsync "$fsync" "$@" 2>"$dir/basalt.log" &
	BASALT_PID=$!
	PIDS+=("$BASALT_PID")
	wait_ready "$BASALT_PORT" "$BASALT_PID"
}

# stop PID: stop one server we started and forget it.
stop() {
	kill "$1" 2>/dev/null && { wait "$1" 2>/dev/null || echo "pid $1 exited with status $?" >&2; }
	local keep=() pid
	for pid in "${PIDS[@]}"; do
		[ "$pid" = "$1" ] || keep+=("$pid")
	done
	PIDS=("${keep[@]}")
}

# Side-by-side results (run.sh, bitmap.sh, streams.sh). A result line is
# NAME P TEST RPS US, tab-separated, in $WORK/results-$MODE: US is the
# server's CPU time (all its threads, from /proc) per request, which moves
# less than the rates when the shared machine speeds up or slows down.

# cpu_ticks PID: the process's user and system time, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# server_pid NAME: the pid of redis or basalt.
server_pid() { if [ "$1" = redis ]; then echo "$REDIS_PID"; else echo "$BASALT_PID"; fi; }

# add_result NAME P TEST RPS TICKS N: TICKS is the server's CPU during the
# N requests.
add_result() {
	awk -v n="$1" -v p="$2" -v t="$3" -v rps="$4" -v ticks="$5" -v hz="$(getconf CLK_TCK)" -v reqs="$6" \
		'BEGIN { printf "%s\t%s\t%s\t%s\t%.2f\n", n, p, t, rps, ticks * 1e6 / hz / reqs }' >>"$WORK/results-$MODE"
}

# median NAME P TEST [COLUMN]: of the rates (4) or of the CPU per request (5).
median() {
	awk -F'\t' -v n="$1" -v p="$2" -v t="$3" -v c="${4:-4}" '$1 == n && $2 == p && $3 == t { print $c }' "$WORK/results-$MODE" |
		sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# side_by_side TEST...: the markdown table of the medians for each -P in
# PIPELINES and each TEST, with the ratios of rates and of CPU.
side_by_side() {
	local p t rr br rc bc ratio cratio
	echo "| test | -P | redis | basalt | basalt/redis | redis CPU us/req | basalt CPU us/req | CPU redis/basalt |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	for p in $PIPELINES; do
		for t in "$@"; do
			rr=$(median redis "$p" "$t") br=$(median basalt "$p" "$t")
			rc=$(median redis "$p" "$t" 5) bc=$(median basalt "$p" "$t" 5)
			ratio=n/a cratio=n/a
			if [ -n "$rr" ] && [ -n "$br" ]; then
				ratio=$(awk -v a="$br" -v b="$rr" 'BEGIN { printf "%.2f", a / b }')
				cratio=$(awk -v a="$rc" -v b="$bc" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
			fi
			echo "| $t | $p | ${rr:-n/a} | ${br:-n/a (unsupported)} | $ratio | ${rc:-n/a} | ${bc:-n/a} | $cratio |"
		done
	done
}
