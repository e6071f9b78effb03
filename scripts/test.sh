#!/usr/bin/env bash
# Runs basalt's whole test suite. Installs what the tests need that Go
# modules don't bring: Debian's redis-server (the differential oracle),
# redis-tools (redis-cli, redis-benchmark) and nodejs and npm (the ioredis
# client test, whose go test runs npm ci).
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v redis-cli >/dev/null || need+=(redis-tools)
/usr/bin/python3 -c "import redis.cluster" 2>/dev/null || need+=(python3-redis)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
if [ ${#need[@]} -gt 0 ]; then
	echo "installing ${need[*]}"
	sudo=""
	[ "$(id -u)" = 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

go vet ./...
go test -count=1 -timeout 20m "$@" ./...

# The differential tests again, through a follower of a 3-node cluster
# (commands forwarded to the leader), and in cluster mode. Skipped when the
# caller narrows the run with arguments.
if [ $# -eq 0 ]; then
	BASALT_CLUSTER=3 go test -count=1 -timeout 10m ./test/compat
	# Once more under Redis Cluster's rules: redis-server in cluster mode
	# against a basalt node in cluster mode with 4 shards, every key given
	# the hash tag {t} so that a scenario's keys share a slot; test/compat's
	# TestMain skips the tests that cannot run so, saying why
	# (docs/cluster.md).
	BASALT_SHARDS=4 go test -count=1 -timeout 15m ./test/compat
	# The data types through a 3-node cluster: on the leader of {t}'s slot,
	# every write replicated to the shard's other two nodes.
	BASALT_SHARDS=6 BASALT_NODES=3 go test -count=1 -timeout 10m \
		-run '^(TestStrings|TestHash|TestLists|TestSets|TestZSet|TestStreams|TestStreamGroups|TestBlocking|TestExpire|TestTransactions|TestSort|TestFunction)$' ./test/compat
fi
