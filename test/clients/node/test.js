// Drives a server with the ioredis client and checks every reply.
// Run by test/clients/ioredis_test.go: node test.js, with the server's port in
// BASALT_PORT (and optionally its host in BASALT_HOST). Exits non-zero if a
// check fails. Plain Node (>= 18, Debian's nodejs), no test framework.
'use strict';

const assert = require('node:assert/strict');
const Redis = require('ioredis');
const { ReplyError } = Redis;
const version = require('ioredis/package.json').version;

const host = process.env.BASALT_HOST || '127.0.0.1';
const port = Number(process.env.BASALT_PORT);
if (!Number.isInteger(port) || port <= 0) {
  console.error('BASALT_PORT must be the server port');
  process.exit(2);
}

// Connections fail fast instead of retrying forever, so a dead server shows
// up as an error rather than a hang.
function client() {
  return new Redis({ host, port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
}

let checks = 0;
function eq(actual, expected, what) {
  assert.deepStrictEqual(actual, expected, what);
  checks++;
}
function ok(cond, what) {
  assert.ok(cond, what);
  checks++;
}

const steps = [];
function step(name, fn) {
  steps.push({ name, fn });
}

const r = client();

step('connect', async () => {
  await r.connect(); // ioredis's ready check sends INFO first
  eq(r.status, 'ready', 'status after connect');
  eq(await r.ping(), 'PONG', 'PING');
});

step('strings and keys', async () => {
  eq(await r.set('s:a', 'hello'), 'OK', 'SET');
  eq(await r.get('s:a'), 'hello', 'GET');
  eq(await r.get('s:missing'), null, 'GET missing');
  for (let i = 1; i <= 3; i++) eq(await r.incr('s:n'), i, `INCR #${i}`);
  eq(await r.mset('s:m1', 'one', 's:m2', 'two'), 'OK', 'MSET');
  eq(await r.mset({ 's:m3': 'three' }), 'OK', 'MSET object form');
  eq(await r.mget('s:m1', 's:missing', 's:m2', 's:m3'), ['one', null, 'two', 'three'], 'MGET');

  eq(await r.ttl('s:a'), -1, 'TTL without expiry');
  eq(await r.ttl('s:missing'), -2, 'TTL missing key');
  eq(await r.expire('s:a', 100), 1, 'EXPIRE');
  eq(await r.expire('s:missing', 100), 0, 'EXPIRE missing key');
  const ttl = await r.ttl('s:a');
  ok(ttl >= 99 && ttl <= 100, `TTL after EXPIRE 100 = ${ttl}`);
  eq(await r.set('s:ex', 'v', 'EX', 50), 'OK', 'SET EX');
  const ttl2 = await r.ttl('s:ex');
  ok(ttl2 >= 49 && ttl2 <= 50, `TTL after SET EX 50 = ${ttl2}`);
  eq(await r.pexpire('s:ex', 1), 1, 'PEXPIRE 1ms');
  await new Promise((res) => setTimeout(res, 20));
  eq(await r.get('s:ex'), null, 'GET after expiry');

  eq(await r.del('s:a', 's:m1', 's:missing'), 2, 'DEL');
  eq(await r.exists('s:a', 's:m1', 's:m2'), 1, 'EXISTS after DEL');
});

step('pipeline of 1000', async () => {
  const p = r.pipeline();
  for (let i = 0; i < 250; i++) {
    p.set(`p:${i}`, String(i));
    p.get(`p:${i}`);
    p.incr('p:count');
    p.incrby(`p:${i}`, 1000);
  }
  const replies = await p.exec();
  eq(replies.length, 1000, 'pipeline reply count');
  for (let i = 0; i < 250; i++) {
    const [set, get, incr, incrby] = replies.slice(4 * i, 4 * i + 4);
    eq(set, [null, 'OK'], `pipeline SET p:${i}`);
    eq(get, [null, String(i)], `pipeline GET p:${i}`);
    eq(incr, [null, i + 1], `pipeline INCR #${i + 1}`);
    eq(incrby, [null, i + 1000], `pipeline INCRBY p:${i}`);
  }
  eq(await r.get('p:count'), '250', 'counter after the pipeline');
});

step('MULTI/EXEC', async () => {
  eq(await r.multi().set('tx:a', '1').incr('tx:a').get('tx:a').exec(),
    [[null, 'OK'], [null, 2], [null, '2']], 'MULTI SET INCR GET');

  // A runtime error fails that command only; the rest is applied.
  const res = await r.multi().set('tx:w', 'word').incr('tx:w').set('tx:c', 'after').exec();
  eq(res.length, 3, 'EXEC reply count');
  eq(res[0], [null, 'OK'], 'EXEC SET');
  ok(res[1][0] instanceof ReplyError, `INCR on a word in EXEC: ${res[1][0]}`);
  eq(res[1][0].message, 'ERR value is not an integer or out of range', 'INCR error in EXEC');
  eq(res[2], [null, 'OK'], 'command after the failed one');
  eq(await r.get('tx:c'), 'after', 'applied after a runtime error');

  // An error while queuing (unknown command) discards the whole transaction.
  await assert.rejects(r.multi().set('tx:x', '1').call('nosuchcommand').exec(), (err) => {
    eq(err.message, 'EXECABORT Transaction discarded because of previous errors.', 'EXECABORT');
    ok(Array.isArray(err.previousErrors) && err.previousErrors.length === 1, 'previousErrors');
    ok(err.previousErrors[0].message.startsWith("ERR unknown command 'nosuchcommand'"),
      `queuing error: ${err.previousErrors[0].message}`);
    return true;
  });
  eq(await r.exists('tx:x'), 0, 'nothing applied after EXECABORT');
});

step('WATCH', async () => {
  const a = client();
  const b = client();
  try {
    await a.connect();
    await b.connect();
    // A write by another connection between WATCH and EXEC aborts it.
    eq(await a.watch('w:k'), 'OK', 'WATCH');
    await b.set('w:k', 'theirs');
    eq(await a.multi().set('w:k', 'mine').exec(), null, 'EXEC after a conflicting write');
    eq(await a.get('w:k'), 'theirs', 'aborted transaction not applied');
    // Without a conflict it commits.
    await a.watch('w:k');
    eq(await a.multi().set('w:k', 'mine').exec(), [[null, 'OK']], 'EXEC without conflict');
    eq(await b.get('w:k'), 'mine', 'committed value');
  } finally {
    a.disconnect();
    b.disconnect();
  }
});

// Optimistic increment: 10 connections each try WATCH/GET/MULTI/SET/EXEC
// 30 times at once; the counter must equal the number of commits.
step('WATCH increments from 10 connections', async () => {
  const key = 'w:counter';
  const conns = Array.from({ length: 10 }, client);
  let committed = 0;
  let aborted = 0;
  try {
    await Promise.all(conns.map((c) => c.connect()));
    await Promise.all(conns.map(async (c) => {
      for (let i = 0; i < 30; i++) {
        await c.watch(key);
        const n = Number(await c.get(key)); // null (missing) -> 0
        const res = await c.multi().set(key, String(n + 1)).exec();
        if (res === null) {
          aborted++;
        } else {
          eq(res, [[null, 'OK']], 'EXEC reply');
          committed++;
        }
      }
    }));
  } finally {
    conns.forEach((c) => c.disconnect());
  }
  ok(committed > 0, 'some transactions committed');
  eq(Number(await r.get(key)), committed, `counter vs ${committed} commits (${aborted} aborted)`);
  console.log(`WATCH: ${committed} committed, ${aborted} aborted`);
});

step('binary values', async () => {
  const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  eq(await r.set('bin:v', all), 'OK', 'SET binary');
  eq(await r.getBuffer('bin:v'), all, 'getBuffer round trip');
  eq(await r.strlen('bin:v'), 256, 'STRLEN');
  // A binary key too, read back through MGET.
  const key = Buffer.concat([Buffer.from('bin:'), all]);
  eq(await r.set(key, all.subarray(128)), 'OK', 'SET binary key');
  eq(await r.mgetBuffer(key, 'bin:v'), [all.subarray(128), all], 'mgetBuffer');
  // CR LF and NUL inside a value go through a pipeline untouched.
  const crlf = Buffer.from('a\r\nb\0c\r\n');
  const res = await r.pipeline().set('bin:crlf', crlf).getBuffer('bin:crlf').exec();
  eq(res, [[null, 'OK'], [null, crlf]], 'CR LF NUL in a pipeline');
});

step('errors', async () => {
  await r.set('e:word', 'hello');
  await assert.rejects(r.incr('e:word'), (err) => {
    ok(err instanceof ReplyError, `INCR error type: ${err.constructor.name}`);
    eq(err.message, 'ERR value is not an integer or out of range', 'INCR on a word');
    return true;
  });
  await assert.rejects(r.call('get'), (err) => {
    eq(err.message, "ERR wrong number of arguments for 'get' command", 'arity error');
    return true;
  });
  eq(await r.get('e:word'), 'hello', 'connection usable after errors');
});

step('scanStream over 2000 keys', async () => {
  const p = r.pipeline();
  for (let i = 0; i < 2000; i++) p.set(`scan:${i}`, 'x');
  const res = await p.exec();
  ok(res.every(([err, v]) => err === null && v === 'OK'), 'pipelined SETs');

  const seen = new Set();
  let batches = 0;
  for await (const keys of r.scanStream({ match: 'scan:*', count: 100 })) {
    batches++;
    for (const k of keys) {
      ok(k.startsWith('scan:'), `SCAN MATCH returned ${k}`);
      seen.add(k);
    }
  }
  eq(seen.size, 2000, 'distinct keys seen by scanStream');
  for (let i = 0; i < 2000; i++) {
    if (!seen.has(`scan:${i}`)) assert.fail(`scanStream missed scan:${i}`);
  }
  ok(batches > 1, `scanStream used several SCAN calls (${batches})`);

  // Without MATCH it sees every key in the database.
  let total = 0;
  for await (const keys of r.scanStream({ count: 500 })) total += keys.length;
  ok(total >= await r.dbsize(), `unfiltered scan saw ${total} keys`);
});

step('pub/sub', async () => {
  const sub = client();
  await sub.connect();
  try {
    const got = [];
    const all = new Promise((resolve) => {
      sub.on('message', (ch, msg) => { got.push(`${ch} ${msg}`); if (got.length === 200) resolve(); });
      sub.on('pmessage', (pat, ch, msg) => { got.push(`${pat} ${ch} ${msg}`); if (got.length === 200) resolve(); });
    });
    eq(await sub.subscribe('ps:a', 'ps:b'), 2, 'SUBSCRIBE count');
    eq(await sub.psubscribe('ps:p*'), 3, 'PSUBSCRIBE count');
    eq(await r.pubsub('NUMSUB', 'ps:a', 'ps:x'), ['ps:a', 1, 'ps:x', 0], 'PUBSUB NUMSUB');
    eq(await r.pubsub('NUMPAT'), 1, 'PUBSUB NUMPAT');
    eq((await r.pubsub('CHANNELS', 'ps:*')).sort(), ['ps:a', 'ps:b'], 'PUBSUB CHANNELS');
    const p = r.pipeline();
    for (let i = 0; i < 100; i++) p.publish('ps:a', String(i));
    for (let i = 0; i < 50; i++) p.publish('ps:pp', String(i));
    const res = await p.exec();
    ok(res.slice(0, 100).every(([err, n]) => err === null && n === 1), 'PUBLISH reaches one subscriber');
    ok(res.slice(100).every(([err, n]) => err === null && n === 1), 'PUBLISH reaches one pattern');
    eq(await r.publish('ps:b', 'last'), 1, 'PUBLISH ps:b');
    // 150 + 1 messages so far; 49 more by pattern.
    for (let i = 50; i < 99; i++) await r.publish('ps:pq', String(i));
    await all;
    const want = [];
    for (let i = 0; i < 100; i++) want.push(`ps:a ${i}`);
    for (let i = 0; i < 50; i++) want.push(`ps:p* ps:pp ${i}`);
    want.push('ps:b last');
    for (let i = 50; i < 99; i++) want.push(`ps:p* ps:pq ${i}`);
    eq(got, want, 'messages in publish order');
    // (ioredis's unsubscribe() with no names waits for a reply per name it
    // knows, so name them.)
    eq(await sub.unsubscribe('ps:a', 'ps:b'), 1, 'UNSUBSCRIBE leaves the pattern');
    eq(await sub.punsubscribe('ps:p*'), 0, 'PUNSUBSCRIBE');
    eq(await sub.get('ps:none'), null, 'commands run again after unsubscribing');
  } finally {
    sub.disconnect();
  }
});

step('quit', async () => {
  const ended = new Promise((res) => r.once('end', res));
  eq(await r.quit(), 'OK', 'QUIT');
  await ended;
  eq(r.status, 'end', 'status after QUIT');
});

async function main() {
  // The Go test has its own deadline; this one names the step that hung. It
  // also keeps the process alive if a promise never settles, which would
  // otherwise end it early with status 0.
  let current = '';
  const watchdog = setTimeout(() => {
    console.error(`FAIL: timed out in step "${current}"`);
    process.exit(1);
  }, 50_000);

  const failed = [];
  let passed = 0;
  for (const { name, fn } of steps) {
    current = name;
    try {
      await fn();
      passed++;
      console.log(`ok   ${name}`);
    } catch (err) {
      failed.push(name);
      console.log(`FAIL ${name}\n${err && err.stack ? err.stack : err}`);
      if (name === 'connect') break; // every other step would fail the same way
    }
  }
  clearTimeout(watchdog);
  if (r.status !== 'end') r.disconnect();
  const summary = `ioredis ${version} against ${host}:${port}: ${passed}/${steps.length} steps passed, ${checks} checks`;
  if (failed.length > 0) {
    console.log(`${summary}; FAILED: ${failed.join(', ')}`);
    process.exitCode = 1;
  } else {
    console.log(summary);
  }
}

main().catch((err) => {
  console.log(`FAIL ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});
