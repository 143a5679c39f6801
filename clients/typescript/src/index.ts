/**
 * @baton/client: the official TypeScript / Node.js client of Baton (protocol v1.1).
 *
 *     import { BatonClient } from '@baton/client';
 *     const client = new BatonClient({ url: 'http://localhost:8080', apiKey: process.env.BATON_API_KEY });
 *     const report = await client.run('order-42', async (work) => db.apply(work.payload, work.fence),
 *       { payload: { amount: 5 } });
 */
export {
  BatonClient, VERSION, newRequestId,
  type BatonClientOptions, type CallControl, type AcquireOptions, type CompleteOptions, type Completions,
  type RunOptions, type RunReport, type ClaimOptions, type RunClaimsOptions, type Logger,
} from './client.js';
export { type Work, type Handler } from './holder.js';
export { type TraceContext } from './tracing.js';
export { Turn, byteOrder, type AwaitTurnOptions, type LockAllWork, type LockAllOptions } from './wait.js';
export { backoffDelay } from './http.js';
export {
  BatonError, ProblemError, InvalidRequestError, UnauthorizedError, ForbiddenError, NotFoundError, LockLostError,
  DuplicateRequestError, NotQueuedError, NotDeadError, BatchMismatchError, PayloadTooLargeError, QueueFullError,
  InternalServerError, BackendUnavailableError, UnexpectedResponseError, TransportError, WaitTimeoutError, HandlerError,
  problemError, type Json, type ProblemCode, type ProblemBody,
} from './errors.js';
export {
  parseOutcome,
  type WorkItem, type Acquired, type Queued, type Next, type Released, type Outcome, type AcquireOutcome,
  type CompleteOutcome, type RequestState, type LockView, type RequestView, type DeadLetter, type DeadLetterList,
  type QueuedRequest, type QueueView, type BusyLocks,
} from './outcomes.js';
