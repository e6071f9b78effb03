# Drives a 3-node basalt cluster with redis-py's RedisCluster (Debian's
# python3-redis, 4.3.4). Run by test/clients/cluster_test.go:
# python3 redis_py_cluster.py PORT,PORT,PORT. Publishes "hello" on py:news
# (the test's subscribers on every node check it). Prints ok, or fails.
import sys

import redis
from redis.cluster import ClusterNode, RedisCluster
from redis.exceptions import ResponseError

ports = [int(p) for p in sys.argv[1].split(',')]
rc = RedisCluster(startup_nodes=[ClusterNode('127.0.0.1', p) for p in ports])

# Strings over every shard.
keys = ['py:%d' % i for i in range(100)]
for i, k in enumerate(keys):
    rc.set(k, i)
assert [int(rc.get(k)) for k in keys] == list(range(100))

# A hash, a transaction and a script, on one slot. RedisCluster refuses
# pipeline(transaction=True), so MULTI/EXEC goes through the connection
# of the node that leads the keys' slot (get_node_from_key).
rc.hset('{py}:h', mapping={'a': 1, 'b': 2})
assert rc.hgetall('{py}:h') == {b'a': b'1', b'b': b'2'}
tx = rc.get_node_from_key('{py}:n').redis_connection.pipeline(transaction=True)
tx.incr('{py}:n').hincrby('{py}:h', 'a', 10).incr('{py}:n')
assert tx.execute() == [1, 11, 2]
script = "return redis.call('incr', KEYS[1]) + redis.call('hget', KEYS[2], 'a')"
assert rc.eval(script, 2, '{py}:n', '{py}:h') == 3 + 11
try:
    rc.execute_command('SELECT', '1', target_nodes=RedisCluster.PRIMARIES)
    raise SystemExit('SELECT 1 succeeded')
except ResponseError as e:
    assert 'not allowed in cluster mode' in str(e), e

# Pub/sub on the node of the channel's slot.
sub = rc.pubsub()
sub.subscribe('py:news')
assert sub.get_message(timeout=5)['type'] == 'subscribe'
rc.publish('py:news', 'hello')
msg = sub.get_message(timeout=5)
assert msg and msg['type'] == 'message' and msg['data'] == b'hello', msg
sub.close()

# A stream consumer group.
rc.xgroup_create('py:q', 'g', id='0', mkstream=True)
ids = [rc.xadd('py:q', {'n': str(i)}) for i in range(3)]
got = rc.xreadgroup('g', 'c', {'py:q': '>'}, count=10)
assert [m[0] for m in got[0][1]] == ids, got
assert got[0][1][0][1] == {b'n': b'0'}, got
assert rc.xack('py:q', 'g', ids[0]) == 1

# The commands over the whole key space, on every primary: scan_iter goes
# to all of them, KEYS and DBSIZE (default node) when asked to.
assert sorted(n.port for n in rc.get_primaries()) == sorted(ports), rc.get_primaries()
want = sorted(k.encode() for k in keys)
assert sorted(rc.scan_iter(match='py:[0-9]*', count=17)) == want
assert sorted(rc.keys('py:[0-9]*', target_nodes=RedisCluster.PRIMARIES)) == want
total = sum(redis.Redis(port=p).dbsize() for p in ports)
assert rc.dbsize(target_nodes=RedisCluster.PRIMARIES) == total
print('ok')
