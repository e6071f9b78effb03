#!/usr/bin/env bash
# Bitmap benchmark: SETBIT, GETBIT and BITFIELD at random offsets below
# 8,000 on one 8,000-bit key, basalt against redis-server 7 with the same
# durability setting, rounds alternating the two servers. Prints one
# markdown table per appendfsync mode: median rps, CPU per request and the ratios
# basalt/redis.
#
#   bench/bitmap.sh
#   ROUNDS=5 PIPELINES="16" MODES=always bench/bitmap.sh
#
# The load comes from bench/bitload, not redis-benchmark: redis-benchmark's
# __rand_int__ is zero-padded ("000000001234"), which both servers refuse
# as a bit offset. bitload sends the same kind of load (CLIENTS
# connections, pipelines of -P commands) with plain decimal offsets.
#
# Environment: N=100000 requests per run, ROUNDS=3, PIPELINES="1 16",
# CLIENTS=50, MODES="always everysec", TESTS="SETBIT GETBIT BITFIELD" (the
# tests to run, by name), REV, BASALT_BIN, KEEP (as run.sh).
set -euo pipefail

N=${N:-100000}
ROUNDS=${ROUNDS:-3}
PIPELINES=${PIPELINES:-"1 16"}
CLIENTS=${CLIENTS:-50}
MODES=${MODES:-"always everysec"}
ONLY=${TESTS:-"SETBIT GETBIT BITFIELD"}
BITS=8000

. "$(dirname "$0")/lib.sh"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

# The tests: name and command. SETBIT writes a random bit, so about half
# the calls change the map (a SETBIT that changes nothing is not written
# to Redis's AOF); BITFIELD increments a random byte-wide field.
ALL=(
	"SETBIT|SETBIT bench:bm __rand_int__ __rand_bit__"
	"GETBIT|GETBIT bench:bm __rand_int__"
	"BITFIELD|BITFIELD bench:bm INCRBY u8 __rand_int__ 1"
)
TESTS=()
for t in "${ALL[@]}"; do
	case " $ONLY " in *" ${t%%|*} "*) TESTS+=("$t") ;; esac
done

bench() {
	local name=$1 port=$2 p=$3 t tname cmd out before after
	for t in "${TESTS[@]}"; do
		tname=${t%%|*}
		cmd=${t#*|}
		before=$(cpu_ticks "$(server_pid "$name")")
		# shellcheck disable=SC2086
		out=$("$WORK/bitload" -p "$port" -c "$CLIENTS" -n "$N" -P "$p" -r "$BITS" -name "$tname" $cmd)
		after=$(cpu_ticks "$(server_pid "$name")")
		add_result "$name" "$p" "$tname" "${out#*,}" $((after - before)) "$N"
	done
}

build_basalt
(cd "$ROOT" && go build -o "$WORK/bitload" ./bench/bitload) || exit 1
start=$SECONDS
echo "N=$N ROUNDS=$ROUNDS PIPELINES=\"$PIPELINES\" CLIENTS=$CLIENTS offsets < $BITS on one key"
echo "redis: $(redis-server --version | cut -d' ' -f3), basalt: $BASALT_VERSION, $(nproc) cores"
for MODE in $MODES; do
	start_redis "$MODE"
	start_basalt "$MODE"
	for port in "$REDIS_PORT" "$BASALT_PORT"; do
		redis-cli -p "$port" setbit bench:bm $((BITS - 1)) 0 >/dev/null
	done
	: >"$WORK/results-$MODE"
	for r in $(seq 1 "$ROUNDS"); do
		for p in $PIPELINES; do
			echo "appendfsync $MODE, round $r/$ROUNDS, -P $p" >&2
			if [ $((r % 2)) = 1 ]; then
				bench redis "$REDIS_PORT" "$p"
				bench basalt "$BASALT_PORT" "$p"
			else
				bench basalt "$BASALT_PORT" "$p"
				bench redis "$REDIS_PORT" "$p"
			fi
		done
	done
	# Both servers must hold the same kind of map: about 8,000 bits (1,001
	# bytes once BITFIELD has run: its u8 at offset 7,999 ends in byte 1,000).
	for port in "$REDIS_PORT" "$BASALT_PORT"; do
		case $(redis-cli -p "$port" strlen bench:bm) in
		1000 | 1001) ;;
		*) echo "bench:bm has the wrong length on $port" >&2; exit 1 ;;
		esac
	done
	stop "$REDIS_PID"
	stop "$BASALT_PID"

	echo
	echo "### appendfsync $MODE (median of $ROUNDS rounds, requests/s)"
	echo
	names=()
	for t in "${TESTS[@]}"; do names+=("${t%%|*}"); done
	side_by_side "${names[@]}"
	echo
done
echo "total time: $((SECONDS - start)) s" >&2
