/**
 * A worker process for the sigkill_mid_handler scenario: holds LCID for REQUEST_ID with a
 * 1500 ms lease, prints "IN_HANDLER <fence> <attempt>" from inside its handler and then waits
 * until it is killed.
 *
 *     node dist/test/killable-worker.js LCID REQUEST_ID    (BATON_URL, BATON_API_KEY from the environment)
 */
import { BatonClient } from '@baton/client';

const [lcid, requestId] = process.argv.slice(2);
if (!lcid || !requestId || !process.env.BATON_URL) {
  console.error('usage: BATON_URL=... node killable-worker.js LCID REQUEST_ID');
  process.exit(2);
}
const client = new BatonClient({ url: process.env.BATON_URL, apiKey: process.env.BATON_API_KEY, logger: null });
await client.run(lcid, async (work) => {
  process.stdout.write(`IN_HANDLER ${work.fence} ${work.attempt}\n`);
  setInterval(() => undefined, 1 << 30); // stay alive, even without the heartbeat timers
  await new Promise(() => undefined); // until SIGKILL
}, { requestId, leaseMs: 1500 });
console.log('RETURNED');
