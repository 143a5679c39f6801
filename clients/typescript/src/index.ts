/**
 * @baton/client: the official TypeScript / Node.js client of Baton (protocol v1.2).
 *
 *     import { BatonClient } from '@baton/client';
 *     const client = new BatonClient({ url: 'http://localhost:8080', apiKey: process.env.BATON_API_KEY });
 *     const stop = new AbortController();
 *     const poller = client.runClaims(work, { lcidPrefix: 'order-', signal: stop.signal }); // who rescues what
 *     const report = await client.run('order-42', work, { payload: { amount: 5 } });
 */
export { BatonClient } from './client.js';
export {
  VERSION, newRequestId,
  type BatonClientOptions, type CallControl, type AcquireOptions, type CompleteOptions, type Completions,
  type ClaimOptions, type Logger,
} from './calls.js';
export { type Work, type Handler, type RunOptions, type Submitted } from './holder.js';
export { type RunClaimsOptions, type ClaimReport } from './claims.js';
export { type TraceContext } from './tracing.js';
export { Turn, byteOrder, type AwaitTurnOptions, type LockAllWork, type LockAllOptions } from './wait.js';
export { backoffDelay } from './retries.js';
export {
  BatonError, ProblemError, InvalidRequestError, UnauthorizedError, ForbiddenError, NotFoundError, LockLostError,
  DuplicateRequestError, NotQueuedError, NotDeadError, BatchMismatchError, PayloadTooLargeError, QueueFullError,
  InternalServerError, BackendUnavailableError, UnexpectedResponseError, TransportError, WaitTimeoutError, HandlerError,
  problemError, type ProblemCode, type ProblemBody,
} from './errors.js';
export {
  parseOutcome,
  type Json, type WorkItem, type Acquired, type Queued, type Next, type Released, type Outcome, type AcquireOutcome,
  type CompleteOutcome, type RequestState, type LockView, type RequestView, type DeadLetter, type DeadLetterList,
  type QueuedRequest, type QueueView, type BusyLocks, type RunReport,
} from './outcomes.js';
