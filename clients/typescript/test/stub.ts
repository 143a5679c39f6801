/**
 * A tiny local HTTP server for the unit tests: it answers from a script of replies, or a route
 * function. It is a stub of HTTP, never of Baton's logic: the conformance tests run the real service.
 */
import assert from 'node:assert/strict';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Reply {
  status: number;
  contentType?: string;
  body?: string;
  headers?: Record<string, string>;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer (the client's timeout must end the attempt). */
  hang?: boolean;
}

export interface Hit {
  method: string;
  path: string;
  body: string;
  at: number;
  headers: IncomingMessage['headers'];
}

export function problem(status: number, code: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Reply {
  const body = {
    type: `urn:baton:problem:${code.toLowerCase().replace(/_/g, '-')}`, title: code, status, code, detail: 'stub',
    instance: '/x', ...extra,
  };
  return { status, contentType: 'application/problem+json', body: JSON.stringify(body), headers };
}

export function ok(body: unknown, status = 200): Reply {
  return { status, contentType: 'application/json', body: JSON.stringify(body) };
}

export class Stub {
  readonly hits: Hit[] = [];
  connections = 0;
  private server: Server;
  private replies: Reply[];
  route: ((hit: Hit) => Reply) | undefined;
  url = '';

  constructor(replies: Reply[] = [], route?: (hit: Hit) => Reply) {
    this.replies = [...replies];
    this.route = route;
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.on('connection', () => {
      this.connections++;
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  paths(): string[] {
    return this.hits.map((h) => h.path);
  }

  bodies(): unknown[] {
    return this.hits.map((h) => (h.body ? JSON.parse(h.body) : undefined));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit: Hit = {
        method: req.method ?? '', path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8'),
        at: performance.now(), headers: req.headers,
      };
      this.hits.push(hit);
      const reply = this.route ? this.route(hit) : (this.replies.length > 1 ? this.replies.shift()! : this.replies[0]!);
      if (reply.hang) return;
      const send = (): void => {
        const body = reply.body ?? '';
        const headers: Record<string, string> = { 'Content-Length': String(Buffer.byteLength(body)), ...reply.headers };
        if (reply.contentType) headers['Content-Type'] = reply.contentType;
        res.writeHead(reply.status, headers);
        res.end(body);
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Awaits a promise that must reject with an error of this type, and returns that error. */
export async function rejects<E>(promise: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof type, `expected ${type.name}, got ${String(error)}`);
    return error as E;
  }
  assert.fail(`expected ${type.name}, but it resolved`);
}
