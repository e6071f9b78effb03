// Drives a basalt node in cluster mode with ioredis's Cluster class.
// Run by test/clients/cluster_test.go: node cluster.js, with the node's port
// in BASALT_PORT. Exits non-zero if a check fails.
'use strict';

const assert = require('node:assert/strict');
const Redis = require('ioredis');

const port = Number(process.env.BASALT_PORT);
const cluster = new Redis.Cluster([{ host: '127.0.0.1', port }], {
  clusterRetryStrategy: () => null,
  redisOptions: { maxRetriesPerRequest: 0 },
});

async function main() {
  for (let i = 0; i < 100; i++) await cluster.set(`io:${i}`, String(i));
  for (let i = 0; i < 100; i++) assert.equal(await cluster.get(`io:${i}`), String(i));
  await cluster.hset('{u}:h', 'a', '1', 'b', '2');
  assert.deepEqual(await cluster.hgetall('{u}:h'), { a: '1', b: '2' });
  const res = await cluster.multi().incr('{u}:n').incr('{u}:n').exec();
  assert.deepEqual(res, [[null, 1], [null, 2]]);
  assert.equal(await cluster.eval("return redis.call('incr', KEYS[1])", 1, '{u}:n'), 3);
  await assert.rejects(cluster.mset('a', '1', 'b', '2'), /CROSSSLOT/);

  const sub = cluster.duplicate();
  await sub.subscribe('chan');
  const got = new Promise((resolve) => sub.on('message', (ch, msg) => resolve(msg)));
  await cluster.publish('chan', 'hi');
  assert.equal(await got, 'hi');
  await sub.quit();

  await cluster.xgroup('CREATE', 'q', 'g', '0', 'MKSTREAM');
  await cluster.xadd('q', '*', 'n', '1');
  const read = await cluster.xreadgroup('GROUP', 'g', 'c', 'STREAMS', 'q', '>');
  assert.equal(read[0][1].length, 1);
  console.log('ok');
}

main().then(() => cluster.quit(), (err) => {
  console.error(err);
  process.exit(1);
});
