# Shared helpers for bench/run.sh and bench/profile.sh: build basalt, start
# basalt and redis-server on free loopback ports in temp dirs, stop them by
# pid. Source it; it sets WORK (a temp dir removed by bench_cleanup).

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/basalt-bench.XXXXXX")
PIDS=()

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
	kill "$1" 2>/dev/null && wait "$1" 2>/dev/null
	local keep=() pid
	for pid in "${PIDS[@]}"; do
		[ "$pid" = "$1" ] || keep+=("$pid")
	done
	PIDS=("${keep[@]}")
}
