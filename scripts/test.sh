#!/usr/bin/env bash
# Runs basalt's whole test suite. Installs what the tests need that Go
# modules don't bring: Debian's redis-server (the differential oracle),
# redis-tools (redis-cli, redis-benchmark), nodejs and npm (the ioredis
# client test, whose go test runs npm ci) and iproute2 (ip: the network
# namespaces of test/cluster's TestLinearizabilityPartitioned).
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v redis-cli >/dev/null || need+=(redis-tools)
/usr/bin/python3 -c "import redis.cluster" 2>/dev/null || need+=(python3-redis)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
command -v ip >/dev/null || need+=(iproute2)
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
# caller narrows the run with arguments. The three passes run side by side,
# each into its own log (printed if it fails): each spends about a quarter
# of its time waiting on its servers' syncs and round trips, and one after
# another they took half the suite's time.
if [ $# -eq 0 ]; then
	logs=$(mktemp -d)
	trap 'rm -rf "$logs"' EXIT
	pids=() names=()
	pass() { # pass NAME VAR=VALUE... -- go test arguments
		local name=$1
		shift
		local vars=()
		while [ "$1" != -- ]; do
			vars+=("$1")
			shift
		done
		shift
		env "${vars[@]}" go test -count=1 "$@" ./test/compat >"$logs/$name" 2>&1 &
		pids+=($!) names+=("$name")
	}
	pass follower BASALT_CLUSTER=3 -- -timeout 15m
	# Under Redis Cluster's rules: redis-server in cluster mode against a
	# basalt node in cluster mode with 4 shards, every key given the hash
	# tag {t} so that a scenario's keys share a slot; test/compat's TestMain
	# skips the tests that cannot run so, saying why (docs/cluster.md).
	pass shards BASALT_SHARDS=4 -- -timeout 20m
	# The same through a 3-node cluster, as a cluster client: from a node
	# that does not lead {t}'s slot, following MOVED (TestMain's nodeSkips
	# says what cannot run so, and why). Each test starts a cluster (8 s),
	# so to end with the follower pass it leaves out the node's own
	# configuration, introspection and replication, and the random tests.
	pass nodes BASALT_SHARDS=6 BASALT_NODES=3 -- -timeout 20m \
		-skip '^(TestConfigSetGet|TestConfigNames|TestModuleAndReplicaOf|TestFailoverLone|TestInfoFields|TestSyncReplies|TestMemory|TestKeyspaceStats|TestMigrateSourceFailures|TestMigrateSourceArgs|TestMigrateKeepsChangedKey|TestRandomPicks|TestBitfieldRandom|TestPubSubSlowSubscriber)$'
	failed=0
	for i in "${!pids[@]}"; do
		if wait "${pids[$i]}"; then
			echo "test/compat, ${names[$i]} pass: $(tail -1 "$logs/${names[$i]}")"
		else
			echo "test/compat, ${names[$i]} pass FAILED:"
			cat "$logs/${names[$i]}"
			failed=1
		fi
	done
	exit $failed
fi
