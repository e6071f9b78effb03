// Drives a 3-node basalt cluster with node-redis's createCluster.
// Run by test/clients/cluster_test.go: node cluster-node-redis.js, with the
// nodes' ports in BASALT_PORTS (comma-separated). Publishes "hello" on
// nr:news (the test's subscribers on every node check it). Exits non-zero
// if a check fails.
'use strict';

const assert = require('node:assert/strict');
const { createCluster } = require('redis');

const ports = process.env.BASALT_PORTS.split(',').map(Number);
const keys = 500; // enough to land in every shard's slot range

async function main() {
  const cluster = createCluster({
    rootNodes: ports.map((port) => ({ url: `redis://127.0.0.1:${port}` })),
    defaults: { socket: { reconnectStrategy: false } },
  });
  cluster.on('error', (err) => { throw err; });
  await cluster.connect();
  // getMasters() has a master once per slot range (2 per node here).
  const masters = [...new Map(cluster.getMasters().map((m) => [m.address, m])).values()];
  assert.deepEqual(masters.map((m) => m.port).sort(), [...ports].sort());

  // Strings over many slots.
  for (let i = 0; i < keys; i++) assert.equal(await cluster.set(`nr:${i}`, String(i)), 'OK');
  for (let i = 0; i < keys; i++) assert.equal(await cluster.get(`nr:${i}`), String(i));
  const slots = new Set();
  for (let i = 0; i < keys; i++) slots.add(await cluster.sendCommand(`nr:${i}`, true, ['CLUSTER', 'KEYSLOT', `nr:${i}`]));
  assert.ok(slots.size > 400, `keys landed in only ${slots.size} slots`);
  let held = 0;
  for (const m of masters) held += (await (await cluster.nodeClient(m)).keys('nr:*')).length;
  assert.equal(held, keys, 'the masters hold every key once');

  // A hash, a transaction and a script, on one slot.
  assert.equal(await cluster.hSet('{nr}:h', { a: '1', b: '2' }), 2);
  assert.deepEqual({ ...(await cluster.hGetAll('{nr}:h')) }, { a: '1', b: '2' });
  const res = await cluster.multi().incr('{nr}:n').hIncrBy('{nr}:h', 'a', 10).incr('{nr}:n').exec();
  assert.deepEqual(res, [1, 11, 2]);
  const sum = await cluster.eval(
    "return redis.call('incr', KEYS[1]) + redis.call('hget', KEYS[2], 'a')",
    { keys: ['{nr}:n', '{nr}:h'] },
  );
  assert.equal(sum, 3 + 11);

  // Redis Cluster's CROSSSLOT: node-redis routes MSET by its first key and
  // leaves the check to the server.
  const crossSlot = (err) => {
    assert.equal(err.message, "CROSSSLOT Keys in request don't hash to the same slot");
    return true;
  };
  await assert.rejects(cluster.mSet(['a', '1', 'b', '2']), crossSlot);
  await assert.rejects(cluster.exists(['a', 'b']), crossSlot);

  // Pub/sub on a second cluster client.
  const sub = cluster.duplicate();
  sub.on('error', (err) => { throw err; });
  await sub.connect();
  let deliver;
  const got = new Promise((resolve) => { deliver = resolve; });
  // subscribe resolves once the server has answered SUBSCRIBE.
  await sub.subscribe('nr:news', (msg, ch) => deliver([ch, msg]));
  // PUBLISH counts the subscribers of the node it went to, as in Redis
  // Cluster: the test has one on every node.
  assert.ok(await cluster.publish('nr:news', 'hello') >= 1);
  assert.deepEqual(await got, ['nr:news', 'hello']);
  await sub.unsubscribe('nr:news');
  await sub.disconnect();

  // A stream consumer group.
  assert.equal(await cluster.xGroupCreate('nr:q', 'g', '0', { MKSTREAM: true }), 'OK');
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push(await cluster.xAdd('nr:q', '*', { n: String(i) }));
  const read = await cluster.xReadGroup('g', 'c', { key: 'nr:q', id: '>' }, { COUNT: 10 });
  assert.equal(read.length, 1);
  assert.equal(read[0].name, 'nr:q');
  assert.deepEqual(read[0].messages.map((m) => m.id), ids);
  assert.deepEqual(read[0].messages.map((m) => ({ ...m.message })), [{ n: '0' }, { n: '1' }, { n: '2' }]);
  assert.equal(await cluster.xAck('nr:q', 'g', ids[0]), 1);

  await cluster.disconnect();
  console.log('ok');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
