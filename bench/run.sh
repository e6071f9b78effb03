#!/usr/bin/env bash
# Side-by-side benchmark: basalt against redis-server 7 with the same
# durability setting, measured by redis-benchmark, rounds alternating the two
# servers. Prints one markdown table per appendfsync mode: the median rps per
# test and pipeline depth, the ratio basalt/redis, and each server's CPU time
# (all its threads) per request with their ratio, which moves less than the
# rates when the shared machine speeds up or slows down.
#
#   bench/run.sh                      # defaults below
#   ROUNDS=5 PIPELINES="16" MODES=always bench/run.sh
#   TESTS=lpush,rpop,hset,sadd,zadd,zrangebyscore,hgetall MODES=always bench/run.sh
#
# Environment:
#   N=200000          requests per redis-benchmark run
#   MSET_N=N/10       requests of the MSET run: an MSET writes 10 keys, so
#                     this is the same number of key writes as the others
#   ROUNDS=3          rounds; the table shows the median
#   PIPELINES="1 16"  -P values
#   CLIENTS=50        -c
#   KEYSPACE=100000   -r
#   TESTS=set,get,incr,mset   any redis-benchmark -t names (lpush, rpop, hset,
#                     sadd, zadd...), one run each in this order (name lpush
#                     before rpop: the pops take what the pushes added), and
#                     these reads of prefilled keys:
#                     zrangebyscore  ZRANGEBYSCORE bench:z 100 200 on a
#                                    10,000-member zset (101 members a reply)
#                     hgetall        HGETALL bench:h, a 100-field hash
#                     and these command lines, N requests each:
#                     pfadd          PFADD bench:hll __rand_int__ (one HLL,
#                                    turning dense early, as a counter of
#                                    visitors would)
#                     pfcount        PFCOUNT bench:hll, prefilled with
#                                    10,000 elements (the count is cached)
#                     and, EVAL_N requests:
#                     evalsha        EVALSHA of a 5-command script (HINCRBY,
#                                    SET, GET, EXPIRE, HGET) on a random key,
#                                    loaded with SCRIPT LOAD on both servers
#                     fcall          FCALL of a function doing the same, from
#                                    a library loaded with FUNCTION LOAD
#   READ_N=N/10       requests of each zrangebyscore / hgetall run
#   EVAL_N=N/4        requests of the evalsha and fcall runs
#   MODES="always everysec"   appendfsync of both servers
#   RAW=FILE          also append every raw CSV line here
#   REV=HEAD          build basalt from this commit instead of the working tree
#   BASALT_BIN=PATH   benchmark this prebuilt basalt binary instead
#   KEEP=1            keep the temp dir (data dirs, logs)
#
# Both servers and redis-benchmark share the machine's cores: the numbers
# compare the servers under the same handicap, not their best case.
set -euo pipefail

N=${N:-200000}
MSET_N=${MSET_N:-$((N / 10))}
READ_N=${READ_N:-$((N / 10))}
EVAL_N=${EVAL_N:-$((N / 4))}
ROUNDS=${ROUNDS:-3}
PIPELINES=${PIPELINES:-"1 16"}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-100000}
TESTS=${TESTS:-set,get,incr,mset}
MODES=${MODES:-"always everysec"}

. "$(dirname "$0")/lib.sh"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

# csv_name maps a -t name to the test name in redis-benchmark's CSV.
csv_name() {
	case $1 in
	mset) echo "MSET (10 keys)" ;;
	zrangebyscore | hgetall | pfadd | pfcount | evalsha | fcall) read_cmd "$1" ;;
	*) echo "$1" | tr a-z A-Z ;;
	esac
}

# read_cmd TEST: the command line of a test run as a command line rather
# than a -t name (it is also its name in the CSV).
read_cmd() {
	case $1 in
	zrangebyscore) echo "ZRANGEBYSCORE bench:z 100 200" ;;
	hgetall) echo "HGETALL bench:h" ;;
	pfadd) echo "PFADD bench:hll __rand_int__" ;;
	pfcount) echo "PFCOUNT bench:hll" ;;
	evalsha) echo "EVALSHA $EVAL_SHA 1 bench:e:__rand_int__ 1" ;;
	fcall) echo "FCALL bench_five 1 bench:f:__rand_int__ 1" ;;
	esac
}


# prefill PORT: the keys of the read tests: bench:z with members m0..m9999
# scored 0..9999, bench:h with fields field0..field99, bench:hll with
# elements e0..e9999 and its count cached.
prefill() {
	local i
	for i in $(seq 0 1000 9999); do
		redis-cli -p "$1" zadd bench:z $(seq "$i" $((i + 999)) | awk '{ print $1, "m" $1 }') >/dev/null
		redis-cli -p "$1" pfadd bench:hll $(seq "$i" $((i + 999)) | awk '{ print "e" $1 }') >/dev/null
	done
	redis-cli -p "$1" hset bench:h $(seq 0 99 | awk '{ print "field" $1, "value-" $1 }') >/dev/null
	if [ "$(redis-cli -p "$1" zcard bench:z)" != 10000 ] || [ "$(redis-cli -p "$1" hlen bench:h)" != 100 ] ||
		[ "$(redis-cli -p "$1" pfcount bench:hll)" -lt 9000 ]; then
		echo "prefill on port $1 failed" >&2
		exit 1
	fi
}

# supported PORT TEST: whether the server knows the command (basalt grows
# command by command; an unknown command would benchmark error replies).
supported() {
	local out
	case $2 in
	set) out=$(redis-cli -p "$1" set bench:check 1) ;;
	get) out=$(redis-cli -p "$1" get bench:check) ;;
	incr) out=$(redis-cli -p "$1" incr bench:check:n) ;;
	mset) out=$(redis-cli -p "$1" mset bench:check:a 1 bench:check:b 2) ;;
	evalsha) out=$(redis-cli -p "$1" script exists "$EVAL_SHA") ;;
	*) out=$(redis-cli -p "$1" "$2") ;;
	esac
	case $out in
	ERR*unknown*) return 1 ;;
	esac
	return 0
}

# bench NAME PORT P TESTS: redis-benchmark runs; records "name P test rps".
# MSET runs on its own with MSET_N requests: each writes 10 keys. Each read
# test runs on its own with READ_N requests, each other command line with N.
bench() {
	local name=$1 port=$2 p=$3 tests=$4 t n
	local plain=() reads=() lines=() evals=() mset=
	IFS=, read -ra list <<<"$tests"
	for t in "${list[@]}"; do
		case $t in
		mset) mset=mset ;;
		zrangebyscore | hgetall) reads+=("$t") ;;
		pfadd | pfcount) lines+=("$t") ;;
		evalsha | fcall) evals+=("$t") ;;
		*) plain+=("$t") ;;
		esac
	done
	# One run per test, so that each gets the server's CPU time of its own.
	for t in "${plain[@]}"; do
		bench1 "$name" "$port" "$p" "$t" "$N"
	done
	[ -z "$mset" ] || bench1 "$name" "$port" "$p" mset "$MSET_N"
	for t in "${reads[@]}"; do
		bench1 "$name" "$port" "$p" "$t" "$READ_N"
	done
	for t in "${lines[@]}"; do
		bench1 "$name" "$port" "$p" "$t" "$N"
	done
	for t in "${evals[@]}"; do
		bench1 "$name" "$port" "$p" "$t" "$EVAL_N"
	done
}

bench1() {
	local name=$1 port=$2 p=$3 tests=$4 n=$5 test rps
	local what=(-t "$tests")
	case $tests in
	zrangebyscore | hgetall | pfadd | pfcount | evalsha | fcall) read -ra what <<<"$(read_cmd "$tests")" ;;
	esac
	local pid before after
	pid=$(server_pid "$name")
	before=$(cpu_ticks "$pid")
	redis-benchmark -h 127.0.0.1 -p "$port" -c "$CLIENTS" -r "$KEYSPACE" -n "$n" \
		-P "$p" --csv "${what[@]}" 2>/dev/null | tr -d '"' >"$WORK/out.csv"
	after=$(cpu_ticks "$pid")
	[ -z "${RAW:-}" ] || sed "s/^/$MODE,$name,P$p,/" "$WORK/out.csv" >>"$RAW"
	while IFS=, read -r test rps _; do
		[ "$test" = test ] && continue
		add_result "$name" "$p" "$test" "$rps" $((after - before)) "$n"
	done <"$WORK/out.csv"
}

build_basalt
start=$SECONDS
echo "N=$N MSET_N=$MSET_N READ_N=$READ_N EVAL_N=$EVAL_N ROUNDS=$ROUNDS PIPELINES=\"$PIPELINES\" CLIENTS=$CLIENTS KEYSPACE=$KEYSPACE TESTS=$TESTS"
echo "redis: $(redis-server --version | cut -d' ' -f3), basalt: $BASALT_VERSION, $(nproc) cores"
for MODE in $MODES; do
	start_redis "$MODE"
	start_basalt "$MODE"
	case ,$TESTS, in
	*,evalsha,* | *,fcall,*)
		load_script "$REDIS_PORT"
		load_script "$BASALT_PORT"
		;;
	esac
	btests=()
	IFS=, read -ra all <<<"$TESTS"
	for t in "${all[@]}"; do
		if supported "$BASALT_PORT" "$t"; then btests+=("$t"); fi
	done
	btests=$(IFS=,; echo "${btests[*]}")
	case ,$TESTS, in
	*,zrangebyscore,* | *,hgetall,* | *,pfcount,*)
		prefill "$REDIS_PORT"
		prefill "$BASALT_PORT"
		;;
	esac
	: >"$WORK/results-$MODE"
	for r in $(seq 1 "$ROUNDS"); do
		for p in $PIPELINES; do
			echo "appendfsync $MODE, round $r/$ROUNDS, -P $p" >&2
			# Alternate who goes first so a drifting machine favours neither.
			if [ $((r % 2)) = 1 ]; then
				bench redis "$REDIS_PORT" "$p" "$TESTS"
				[ -z "$btests" ] || bench basalt "$BASALT_PORT" "$p" "$btests"
			else
				[ -z "$btests" ] || bench basalt "$BASALT_PORT" "$p" "$btests"
				bench redis "$REDIS_PORT" "$p" "$TESTS"
			fi
		done
	done
	stop "$REDIS_PID"
	stop "$BASALT_PID"

	echo
	echo "### appendfsync $MODE (median of $ROUNDS rounds, requests/s)"
	echo
	names=()
	for t in "${all[@]}"; do names+=("$(csv_name "$t")"); done
	side_by_side "${names[@]}"
	echo
done
echo "total time: $((SECONDS - start)) s" >&2
