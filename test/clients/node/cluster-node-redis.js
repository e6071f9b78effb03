// Drives a basalt node in cluster mode with node-redis's createCluster.
// Run by test/clients/cluster_test.go: node cluster-node-redis.js, with the
// node's port in BASALT_PORT. Exits non-zero if a check fails.
'use strict';

const assert = require('node:assert/strict');
const { createCluster } = require('redis');

const port = Number(process.env.BASALT_PORT);
const url = `redis://127.0.0.1:${port}`;
const keys = 500; // enough to land in every shard's slot range

async function main() {
  const cluster = createCluster({
    rootNodes: [{ url }],
    defaults: { socket: { reconnectStrategy: false } },
    maxCommandRedirections: 0, // a MOVED would mean node-redis read the topology wrong
  });
  cluster.on('error', (err) => { throw err; });
  await cluster.connect();
  const masters = cluster.getMasters();
  assert.equal(masters.length, 1, 'one node serves every shard');
  assert.equal(masters[0].port, port);

  // Strings over many slots.
  for (let i = 0; i < keys; i++) assert.equal(await cluster.set(`nr:${i}`, String(i)), 'OK');
  for (let i = 0; i < keys; i++) assert.equal(await cluster.get(`nr:${i}`), String(i));
  const slots = new Set();
  for (let i = 0; i < keys; i++) slots.add(await cluster.sendCommand(`nr:${i}`, true, ['CLUSTER', 'KEYSLOT', `nr:${i}`]));
  assert.ok(slots.size > 400, `keys landed in only ${slots.size} slots`);
  const node = await cluster.nodeClient(masters[0]);
  assert.equal(await node.dbSize(), keys);

  // A hash, a transaction and a script, on one slot.
  assert.equal(await cluster.hSet('{u}:h', { a: '1', b: '2' }), 2);
  assert.deepEqual({ ...(await cluster.hGetAll('{u}:h')) }, { a: '1', b: '2' });
  const res = await cluster.multi().incr('{u}:n').hIncrBy('{u}:h', 'a', 10).incr('{u}:n').exec();
  assert.deepEqual(res, [1, 11, 2]);
  const sum = await cluster.eval(
    "return redis.call('incr', KEYS[1]) + redis.call('hget', KEYS[2], 'a')",
    { keys: ['{u}:n', '{u}:h'] },
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
  await sub.subscribe('chan', (msg, ch) => deliver([ch, msg]));
  assert.equal(await cluster.publish('chan', 'hi'), 1);
  assert.deepEqual(await got, ['chan', 'hi']);
  await sub.unsubscribe('chan');
  await sub.disconnect();

  // A stream consumer group.
  assert.equal(await cluster.xGroupCreate('q', 'g', '0', { MKSTREAM: true }), 'OK');
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push(await cluster.xAdd('q', '*', { n: String(i) }));
  const read = await cluster.xReadGroup('g', 'c', { key: 'q', id: '>' }, { COUNT: 10 });
  assert.equal(read.length, 1);
  assert.equal(read[0].name, 'q');
  assert.deepEqual(read[0].messages.map((m) => m.id), ids);
  assert.deepEqual(read[0].messages.map((m) => ({ ...m.message })), [{ n: '0' }, { n: '1' }, { n: '2' }]);
  assert.equal(await cluster.xAck('q', 'g', ids[0]), 1);

  await cluster.disconnect();
  console.log('ok');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
