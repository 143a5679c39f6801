#!/usr/bin/env node
// A Baton worker using only Node.js's standard library (http).
//
// It submits requests for some lcids and runs the holder loop of protocol v1: work on what it
// is given (ACQUIRED: its own request, NEXT: the request in the body), passing the fence to the
// database, heartbeating during long work, then completing, which hands it the next queued
// request. QUEUED means another holder will do the work. On LOCK_LOST it stops (the request is
// redelivered); on QUEUE_FULL and 503 it waits Retry-After and retries the same call, which is
// safe because every call is idempotent by requestId and token.
//
// With --take=N (protocol v1.1 batch handoff) a holder is handed up to N queued requests at
// once, under one fence, and finishes them with one complete (`completed`): fewer round trips on
// a hot lcid.
//
// With --mode=wait (protocol v1.1) it is a service that can do only its own kind of request (a
// stock service, say, next to a payment service on the same orders): each request is submitted
// as `wait`, keeps its place in the lcid's FIFO queue, and this worker long-polls for its turn
// (`waitMs`), does it and completes it. Another service's holder is never handed its requests.
//
// With --claims it is a claim worker: a continuous claim poller that does orphaned work (requests
// whose holder aborted or died) of the lcids that start with --lcid-prefix. It claims; on work it
// runs the holder loop and claims again at once; on 204 it waits 200 ms to 1 s (jitter) and claims
// again, until SIGTERM or --claim-seconds. It never drains until 204 and stops: work becomes
// claimable after the call that orphaned it, so a drain that stops at the first 204 leaves work behind.
//
//   node worker.js --url=http://localhost:8080 --lcids=order-1,order-2 --count=20 --name=node
//   node worker.js --take=8 ...                    (batch handoff)
//   node worker.js --mode=wait --name=stock ...   (the requestIds are NAME-N)
//   node worker.js --claims --lcid-prefix=order- --name=orders-claims
//   (--key=KEY when authentication is on; --db=FILE is the simulated database)
'use strict';
const http = require('http');
const fs = require('fs');

const args = Object.fromEntries(process.argv.slice(2).map((a) => {
  const [k, ...v] = a.replace(/^--/, '').split('=');
  return [k, v.join('=')];
}));
const base = new URL(args.url || 'http://localhost:8080');
const leaseMs = Number(args['lease-ms'] || 2000);
const name = args.name || 'node';
const take = Number(args.take || 1);
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

class LockLost extends Error {}

function send(method, path, body, timeout = 10000) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const headers = { 'Content-Type': 'application/json' };
    if (args.key) headers.Authorization = `Bearer ${args.key}`;
    if (data) headers['Content-Length'] = Buffer.byteLength(data);
    const req = http.request({ host: base.hostname, port: base.port, path, method, headers, agent, timeout },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => { text += chunk; });
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text ? JSON.parse(text) : null }));
      });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    if (data) req.write(data);
    req.end();
  });
}

// One call, retried through 429 and 503 as their Retry-After says.
async function call(method, path, body, timeout) {
  for (;;) {
    let res;
    try {
      res = await send(method, path, body, timeout);
    } catch (unreachable) {
      await sleep(500); // Baton unreachable: the same call again is safe
      continue;
    }
    if (res.status === 429 || res.status === 503) {
      await sleep(1000 * Number(res.headers['retry-after'] || 1));
      continue;
    }
    if (res.body && res.body.code === 'LOCK_LOST') throw new LockLost(res.body.detail);
    return res;
  }
}

// The simulated database: an append-only file of writes, each with its fence. A real database
// keeps the highest fence it has seen per entity and refuses a lower one.
function dbWrite(lcid, requestId, fence, batch) {
  fs.appendFileSync(args.db || 'processed.jsonl',
    `${JSON.stringify({ lcid, requestId, fence, worker: name, batch })}\n`);
}

async function work(lcid, token, request, fence, batch = 1) {
  const payload = request.payload || {};
  const deadline = Date.now() + (payload.workMs || 5);
  while (Date.now() < deadline) {
    await sleep(Math.min(leaseMs / 3, Math.max(0, deadline - Date.now())));
    if (Date.now() < deadline) await call('POST', `/v1/locks/${lcid}/heartbeat`, { token });
  }
  dbWrite(lcid, request.requestId, fence, batch);
}

// protocol.md: while ACQUIRED or NEXT, work, then complete (which hands over the next one, or
// with take > 1 the next batch: every request of it shares the answer's fence).
async function holderLoop(lcid, own, answer) {
  try {
    while (answer && (answer.status === 'ACQUIRED' || answer.status === 'NEXT')) {
      const batch = answer.status === 'ACQUIRED' ? [own] : (answer.requests || [answer.request]);
      for (const request of batch) await work(lcid, answer.token, request, answer.fence, batch.length);
      const body = take === 1
        ? { token: answer.token, requestId: batch[0].requestId, result: { by: name } }
        : { token: answer.token, completed: batch.map((r) => ({ requestId: r.requestId, result: { by: name } })), take };
      answer = (await call('POST', `/v1/locks/${lcid}/complete`, body)).body;
    }
  } catch (e) {
    if (!(e instanceof LockLost)) throw e;
    console.log(`${name}: lock lost on ${lcid} (${e.message}); the request will be redelivered`);
  }
}

// v1.1: a wait request's acquire held until its turn (200 ACQUIRED: picked up) or waitMs (202
// QUEUED: ask again). The same call each time; read timeout above waitMs.
async function waitTurn(lcid, requestId, payload, waitMs = 25000) {
  for (;;) {
    const res = await call('POST', `/v1/locks/${lcid}/acquire`,
      { requestId, payload, leaseMs, mode: 'wait', waitMs }, waitMs + 10000);
    if (res.status !== 202) return res.body;
  }
}

// Submit (waitMs 0: QUEUED or ACQUIRED at once), then wait for the turn, work, complete.
async function waitMode(lcids, count) {
  for (let i = 0; i < count; i++) {
    const lcid = lcids[Math.floor(Math.random() * lcids.length)];
    const requestId = `${name}-${i}`;
    const payload = { workMs: i % 10 === 9 ? 1500 : 1 + Math.floor(Math.random() * 10), n: i };
    const sentAt = Date.now() / 1000;
    const res = await call('POST', `/v1/locks/${lcid}/acquire`, { requestId, payload, leaseMs, mode: 'wait' });
    if (res.status !== 200 && res.status !== 202) {
      console.log(`${name}: ${requestId} refused: ${JSON.stringify(res.body)}`);
      continue;
    }
    fs.appendFileSync(args.submitted || 'submitted.jsonl',
      `${JSON.stringify({ lcid, requestId, sentAt, ackedAt: Date.now() / 1000 })}\n`);
    const turn = res.status === 202 ? await waitTurn(lcid, requestId, payload) : res.body;
    if (!turn || turn.status !== 'ACQUIRED') {
      console.log(`${name}: ${requestId} did not get its turn: ${JSON.stringify(turn)}`);
      continue;
    }
    try {
      await work(lcid, turn.token, { requestId, payload }, turn.fence);
      const done = (await call('POST', `/v1/locks/${lcid}/complete`,
        { token: turn.token, requestId, result: { by: name } })).body;
      if (done.status !== 'RELEASED') console.log(`${name}: unexpected answer to a wait holder's complete: ${JSON.stringify(done)}`);
    } catch (e) {
      if (!(e instanceof LockLost)) throw e;
      console.log(`${name}: lock lost on ${lcid} (${e.message}); the request goes back to the queue`);
    }
  }
  console.log(`${name}: submitted ${count} (wait mode)`);
}

async function claimPoller() {
  let stop = false;
  process.on('SIGTERM', () => { stop = true; });
  const seconds = Number(args['claim-seconds'] || 0);
  const deadline = seconds > 0 ? Date.now() + seconds * 1000 : Infinity;
  const body = { leaseMs, take };
  if (args['lcid-prefix']) body.lcidPrefix = args['lcid-prefix'];
  let claimed = 0;
  while (!stop && Date.now() < deadline) {
    const res = await call('POST', '/v1/claims', body);
    if (res.status !== 200) {
      await sleep(200 + Math.random() * 800);
      continue;
    }
    claimed += 1;
    await holderLoop(res.body.lcid, null, res.body);
  }
  console.log(`${name}: claimed work on ${claimed} lcids`);
}

async function main() {
  if ('claims' in args) {
    await claimPoller();
    agent.destroy();
    return;
  }
  if (args.mode === 'wait') {
    await waitMode((args.lcids || 'order-1').split(','), Number(args.count || 10));
    agent.destroy();
    return;
  }
  const lcids = (args.lcids || 'order-1').split(',');
  const count = Number(args.count || 10);
  for (let i = 0; i < count; i++) {
    const lcid = lcids[Math.floor(Math.random() * lcids.length)];
    const requestId = `${name}-${i}`;
    const payload = { workMs: i % 10 === 9 ? 1500 : 1 + Math.floor(Math.random() * 10), n: i };
    const sentAt = Date.now() / 1000;
    const res = await call('POST', `/v1/locks/${lcid}/acquire`, { requestId, payload, leaseMs, take });
    if (!res.body || !res.body.status) {
      console.log(`${name}: ${requestId} refused: ${JSON.stringify(res.body)}`);
      continue;
    }
    fs.appendFileSync(args.submitted || 'submitted.jsonl',
      `${JSON.stringify({ lcid, requestId, sentAt, ackedAt: Date.now() / 1000 })}\n`);
    await holderLoop(lcid, { requestId, payload }, res.body);
  }
  // Work this submitter leaves orphaned (a lock it lost) is done by the claim workers (--claims).
  console.log(`${name}: submitted ${count}`);
  agent.destroy();
}

main().catch((e) => { console.error(e); process.exit(1); });
