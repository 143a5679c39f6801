#!/usr/bin/env node
// A Baton worker on the official TypeScript client (clients/typescript, no runtime dependency).
// Build the client first: (cd clients/typescript && npm ci && npm run build). This folder's
// package.json makes this file an ES module.
//
// It submits requests for some lcids with client.run, which runs the holder loop: work on what it
// is given (its own request, or the queued ones it is handed), passing the fence to the database,
// then complete, which hands it the next queued request. The client heartbeats in the background
// during long work, retries every call through 429, 503 and connection errors with the same body
// (safe: every call is idempotent by requestId and token), and aborts `work.signal` when the lock
// is lost (the request goes back to its lcid's queue with no holder). QUEUED means the request is
// stored and another holder does it. onSubmit records each request the moment Baton acknowledged it.
//
// Work nobody holds (a lock lost, a holder that died) is done only when someone comes for its lcid:
// a deployment that submits with run also runs claim workers (--claims) for its lcids
// (docs/claims-and-dead-letters.md#who-rescues-what); examples/e2e/run starts them first.
//
// With --take=N (protocol v1.1 batch handoff) a holder is handed up to N queued requests at once,
// under one fence, and finishes them with one complete: fewer round trips on a hot lcid.
//
// With --mode=wait (protocol v1.1) it is a service that can do only its own kind of request (a
// stock service, say, next to a payment service on the same orders): each request is submitted as
// `wait`, keeps its place in the lcid's FIFO queue, and this worker long-polls for its turn
// (client.awaitTurn), does it and completes it. Another service's holder is never handed its
// requests.
//
// With --claims it is a claim worker: the client's continuous claim poller (client.runClaims) does
// orphaned work (requests whose holder aborted or died) of the lcids that start with --lcid-prefix.
// It claims; on work it runs the holder loop and claims again at once; on 204 it waits 200 ms to
// 1 s (jitter) and claims again, until SIGTERM or --claim-seconds. It never drains until 204 and
// stops: work becomes claimable after the call that orphaned it, so such a drain leaves work behind.
// SIGTERM ends a claim in flight at once (also one retrying through an outage); the work in hand is
// finished first. It then prints what it did: claims with work, requests handled, failures.
//
//   node worker.js --url=http://localhost:8080 --lcids=order-1,order-2 --count=20 --name=node
//   node worker.js --take=8 ...                    (batch handoff)
//   node worker.js --mode=wait --name=stock ...   (the requestIds are NAME-N)
//   node worker.js --claims --lcid-prefix=order- --name=orders-claims
//   (--key=KEY when authentication is on; --db=FILE is the simulated database)
import { appendFileSync } from 'node:fs';
import { BatonClient, LockLostError, ProblemError } from '../../clients/typescript/dist/index.js';

const args = Object.fromEntries(process.argv.slice(2).map((a) => {
  const [k, ...v] = a.replace(/^--/, '').split('=');
  return [k, v.join('=')];
}));
const name = args.name || 'node';
const leaseMs = Number(args['lease-ms'] || 2000);
const take = Number(args.take || 1);
const dbPath = args.db || 'processed.jsonl';
const submittedPath = args.submitted || 'submitted.jsonl';
// A worker outlives outages: one call keeps retrying for two minutes before it gives up.
const RETRY_MS = 120000;

const client = new BatonClient({
  url: args.url || 'http://localhost:8080',
  apiKey: args.key || undefined,
  deadlineMs: RETRY_MS,
  // The client reports lost locks and failed claimed work here: show them.
  logger: { warn: (message) => console.error(`${name}: ${message}`) },
});

// The simulated database: an append-only file of writes, each with its fence. A real database
// keeps the highest fence it has seen per entity and refuses a lower one: that is what turns away
// a holder whose lease ran out. One appendFileSync is one O_APPEND write: lines never interleave.
function dbWrite(lcid, requestId, fence, batch = 1) {
  appendFileSync(dbPath, `${JSON.stringify({ lcid, requestId, fence, worker: name, batch })}\n`);
}

function recordSubmitted(lcid, requestId, sentAt) {
  appendFileSync(submittedPath, `${JSON.stringify({ lcid, requestId, sentAt, ackedAt: Date.now() / 1000 })}\n`);
}

const logLine = (message) => console.error(`${name}: ${message}`);

// Resolves after ms, or early when signal aborts (the lock is gone).
function pause(ms, signal) {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

// The work on one request: `workMs` of it (the client heartbeats meanwhile), then the write.
// `check()` throws the LockLostError once the lock is lost: never write then.
async function doRequest(lcid, request, fence, signal, check, batch = 1) {
  await pause((request.payload && request.payload.workMs) || 5, signal);
  check();
  dbWrite(lcid, request.requestId, fence, batch);
}

// The handler of the holder loop: one request, or a batch (then a result per requestId).
async function handler(work) {
  for (const request of work.requests) {
    await doRequest(work.lcid, request, work.fence, work.signal, work.check, work.requests.length);
  }
  if (work.requests.length === 1) return { by: name };
  return Object.fromEntries(work.requests.map((r) => [r.requestId, { by: name }]));
}

function newRequest(i, lcids) {
  const lcid = lcids[Math.floor(Math.random() * lcids.length)];
  // Every tenth request is long work that needs heartbeats.
  const payload = { workMs: i % 10 === 9 ? 1500 : 1 + Math.floor(Math.random() * 10), n: i };
  return { lcid, requestId: `${name}-${i}`, payload };
}

// Submit (QUEUED or ACQUIRED at once), then await the turn, work, complete.
async function waitMode(lcids, count) {
  for (let i = 0; i < count; i++) {
    const { lcid, requestId, payload } = newRequest(i, lcids);
    const sentAt = Date.now() / 1000;
    try {
      await client.acquire(lcid, { requestId, payload, leaseMs, mode: 'wait' });
    } catch (refused) {
      if (!(refused instanceof ProblemError)) throw refused;
      console.log(`${name}: ${requestId} refused: ${refused.message}`);
      continue;
    }
    recordSubmitted(lcid, requestId, sentAt);
    let turn;
    try {
      // Repeats the same acquire as long-polls; an ACQUIRED repeat is the same grant.
      turn = await client.awaitTurn(lcid, requestId, { payload, leaseMs });
    } catch (error) {
      if (!(error instanceof ProblemError)) throw error;
      console.log(`${name}: ${requestId} did not get its turn: ${error.message}`);
      continue;
    }
    try {
      await doRequest(lcid, { requestId, payload }, turn.fence, turn.signal, () => turn.check());
      const done = await turn.complete({ by: name });
      if (done.status !== 'RELEASED') console.log(`${name}: unexpected answer to a wait holder's complete: ${JSON.stringify(done)}`);
    } catch (error) {
      if (!(error instanceof LockLostError)) throw error;
      console.log(`${name}: lock lost on ${lcid} (${error.message}); the request goes back to the queue`);
    }
  }
  console.log(`${name}: submitted ${count} (wait mode)`);
}

// The client's continuous claim poller, until SIGTERM (after the work in hand) or --claim-seconds.
async function claimPoller() {
  const stop = new AbortController();
  process.on('SIGTERM', () => stop.abort());
  const seconds = Number(args['claim-seconds'] || 0);
  if (seconds > 0) setTimeout(() => stop.abort(), seconds * 1000).unref();
  const report = await client.runClaims(handler, {
    lcidPrefix: args['lcid-prefix'] || undefined, leaseMs, take, signal: stop.signal,
    // Failed claims, handler errors and lost locks: the poller goes on after each.
    onError: (error) => logLine(`claim poller: ${error.message}`),
  });
  console.log(`${name}: claim poller stopped: ${report.claims} claims with work, ${report.handled} requests handled, `
    + `${report.failed} failures`);
}

async function handoffMode(lcids, count) {
  for (let i = 0; i < count; i++) {
    const { lcid, requestId, payload } = newRequest(i, lcids);
    const sentAt = Date.now() / 1000;
    try {
      // onSubmit: once, when Baton acknowledged the request as stored (QUEUED, ACQUIRED, NEXT, or
      // stored by an attempt whose answer was lost), before any handler runs.
      await client.run(lcid, handler, { requestId, payload, leaseMs, take, onSubmit: () => recordSubmitted(lcid, requestId, sentAt) });
    } catch (error) {
      if (error instanceof LockLostError) {
        console.log(`${name}: lock lost on ${lcid} (${error.message}); a claim worker or the next holder does the rest`);
      } else if (error instanceof ProblemError) {
        console.log(`${name}: ${requestId}: ${error.message} (handled before: ${error.report?.handled.join(', ') || 'none'})`);
      } else {
        throw error;
      }
    }
  }
  // Work this submitter leaves orphaned (a lock it lost) is done by the claim workers (--claims).
  console.log(`${name}: submitted ${count}`);
}

async function main() {
  const lcids = (args.lcids || 'order-1').split(',');
  const count = Number(args.count || 10);
  if ('claims' in args) await claimPoller();
  else if (args.mode === 'wait') await waitMode(lcids, count);
  else await handoffMode(lcids, count);
}

main().then(() => process.exit(0), (error) => {
  console.error(error);
  process.exit(1);
});
