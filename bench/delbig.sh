#!/usr/bin/env bash
# DEL and UNLINK of a big collection against a small one, basalt and
# redis-server side by side (appendfsync always on both). basalt deletes a
# collection's members with one range deletion, so deleting 1,000,000
# members should cost about what deleting 10 does: one synced write.
#
#   bench/delbig.sh
#   BIG=100000 REV=HEAD bench/delbig.sh
#
# Environment: BIG=1000000 (members of the big hash/set), SMALL=10, REPS=5
# (small case, median), FSYNC=always, REV, BASALT_BIN, KEEP (as in run.sh).
set -euo pipefail

BIG=${BIG:-1000000}
SMALL=${SMALL:-10}
REPS=${REPS:-5}
FSYNC=${FSYNC:-always}

. "$(dirname "$0")/lib.sh"
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

build_basalt
(cd "$ROOT" && go build -o "$WORK/deltime" ./bench/deltime) || exit 1
start=$SECONDS
echo "BIG=$BIG SMALL=$SMALL REPS=$REPS appendfsync $FSYNC"
echo "redis: $(redis-server --version | cut -d' ' -f3), basalt: $BASALT_VERSION, $(nproc) cores"
echo
echo "| server | type | command | $SMALL members (ms, median of $REPS) | $BIG members (ms) | next SET (ms) | fill (members/s) |"
echo "|---|---|---|---:|---:|---:|---:|"
start_redis "$FSYNC"
"$WORK/deltime" -addr "127.0.0.1:$REDIS_PORT" -name redis -big "$BIG" -small "$SMALL" -reps "$REPS"
stop "$REDIS_PID"
start_basalt "$FSYNC"
"$WORK/deltime" -addr "127.0.0.1:$BASALT_PORT" -name basalt -big "$BIG" -small "$SMALL" -reps "$REPS"
stop "$BASALT_PID"
echo "total time: $((SECONDS - start)) s" >&2
