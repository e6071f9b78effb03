// Drives a 3-node basalt cluster with ioredis's Cluster class.
// Run by test/clients/cluster_test.go: node cluster.js, with the nodes'
// ports in BASALT_PORTS (comma-separated). Publishes "hello" on io:news
// (the test's subscribers on every node check it). Exits non-zero if a
// check fails.
'use strict';

const assert = require('node:assert/strict');
const Redis = require('ioredis');

const ports = process.env.BASALT_PORTS.split(',').map(Number);
const cluster = new Redis.Cluster(ports.map((port) => ({ host: '127.0.0.1', port })), {
  clusterRetryStrategy: () => null,
  redisOptions: { maxRetriesPerRequest: 0 },
});

async function main() {
  // Strings over every shard, on the three masters.
  for (let i = 0; i < 100; i++) await cluster.set(`io:${i}`, String(i));
  for (let i = 0; i < 100; i++) assert.equal(await cluster.get(`io:${i}`), String(i));
  const masters = cluster.nodes('master');
  assert.deepEqual(masters.map((m) => m.options.port).sort(), [...ports].sort());
  const perMaster = await Promise.all(masters.map((m) => m.keys('io:*')));
  assert.equal(perMaster.flat().length, 100);

  // A hash, a transaction and a script, on one slot.
  await cluster.hset('{io}:h', 'a', '1', 'b', '2');
  assert.deepEqual(await cluster.hgetall('{io}:h'), { a: '1', b: '2' });
  const res = await cluster.multi().incr('{io}:n').hincrby('{io}:h', 'a', 10).incr('{io}:n').exec();
  assert.deepEqual(res, [[null, 1], [null, 11], [null, 2]]);
  const sum = "return redis.call('incr', KEYS[1]) + redis.call('hget', KEYS[2], 'a')";
  assert.equal(await cluster.eval(sum, 2, '{io}:n', '{io}:h'), 3 + 11);
  await assert.rejects(cluster.mset('a', '1', 'b', '2'), /CROSSSLOT/);

  // Pub/sub on a second cluster client.
  const sub = cluster.duplicate();
  await sub.subscribe('io:news');
  const got = new Promise((resolve) => sub.on('message', (ch, msg) => resolve([ch, msg])));
  await cluster.publish('io:news', 'hello');
  assert.deepEqual(await got, ['io:news', 'hello']);
  await sub.quit();

  // A stream consumer group.
  await cluster.xgroup('CREATE', 'io:q', 'g', '0', 'MKSTREAM');
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push(await cluster.xadd('io:q', '*', 'n', String(i)));
  const read = await cluster.xreadgroup('GROUP', 'g', 'c', 'COUNT', 10, 'STREAMS', 'io:q', '>');
  assert.deepEqual(read, [['io:q', ids.map((id, i) => [id, ['n', String(i)]])]]);
  assert.equal(await cluster.xack('io:q', 'g', ids[0]), 1);
  console.log('ok');
}

main().then(() => cluster.quit(), (err) => {
  console.error(err);
  process.exit(1);
});
