// Connections and their response queues, bounded per client and per socket:
// - a share of the open connections per client address (server.maxConnectionsPerClient) and in all
//   (server.maxConnections), decided when a connection is accepted, before anything on it is parsed. A client at its
//   share (or the server at its cap) gives up its longest idle keep-alive connection first (the heaviest client's,
//   when the server is full); with none idle, the new connection is answered 503 and closed.
// - one request at a time per connection: a pipelined request waits until the one before it is answered and the
//   socket's unwritten bytes are under server.socketBufferBytes (a client that does not read is not given more),
//   and the socket is not read while requests wait. A socket whose unwritten bytes do not go down for
//   server.socketStallMs, or that has more than server.maxPipelined requests waiting, is closed.
import { STATUS_CODES } from 'node:http';
import { errors } from '../pipeline/errors.js';
import { errorBody } from './error-replies.js';

/**
 * @typedef {object} SocketState
 * @property {string} client the address its share counts against
 * @property {number} busy requests parsed and not yet answered
 * @property {number} lastActive performance.now() of its last request or answer
 * @property {import('node:http').ServerResponse | null} current the answer of the request being handled
 * @property {(() => void)[]} waiting pipelined requests waiting for their turn
 * @property {boolean} pausedHere reading stopped by this module
 * @property {NodeJS.Timeout | null} stall the timer watching a socket with requests waiting
 * @property {boolean} overBound its next request waits for its unwritten bytes to go under the bound
 */

const STATE = Symbol('scdv.socket');

/**
 * The address a connection's share counts against: IPv4 (also IPv4-mapped IPv6) as is, IPv6 by its /64 prefix
 * (one host commonly holds a whole /64).
 * @param {string | undefined} address
 */
export function clientOf(address) {
  if (!address) return '?';
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7);
  if (!address.includes(':')) return address;
  const [head, tail = ''] = address.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...h, ...Array(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t] : h;
  return `${groups.slice(0, 4).map((g) => g.toLowerCase().replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/**
 * @param {number} n connections open
 * @param {string} limit the setting
 * @param {number} value its value
 */
function busy(n, limit, value) {
  const e = errors.TOO_MANY_CONNECTIONS(n, limit, value);
  e.details = { limit, value, retry_after_s: 1 };
  return e;
}

/**
 * A raw 503 for a connection refused before any request on it was parsed; the socket closes after it.
 * @param {import('node:net').Socket} socket
 * @param {import('../pipeline/errors.js').ScdvError} e
 */
function refuse(socket, e) {
  const body = JSON.stringify(errorBody(e));
  socket.on('error', () => {});
  // Whatever the client sends is read and dropped, so that closing does not reset the connection before it has read the answer.
  socket.resume();
  socket.end(`HTTP/1.1 503 ${STATUS_CODES[503]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nRetry-After: 1\r\nConnection: close\r\n\r\n${body}`);
  setTimeout(() => socket.destroy(), 2000).unref();
}

/**
 * Install the bounds on an app's server (before it listens).
 * @param {import('fastify').FastifyInstance} app
 * @param {import('../pipeline/config.js').Config['server']} settings
 * @param {import('./prometheus.js').Metrics} metrics
 */
export function installSocketBounds(app, settings, metrics) {
  const server = app.server;
  /** @type {Map<string, Set<import('node:net').Socket>>} open connections by client */
  const byClient = new Map();
  let open = 0;
  // The cap is applied here, with the per-client share, instead of by Node (which closes a connection past it unanswered).
  server.maxConnections = 0;

  /** @param {import('node:net').Socket} socket @returns {SocketState} */
  const stateOf = (socket) => /** @type {any} */ (socket)[STATE];

  /** The longest idle connection of a set (no request being handled on it), or null. @param {Set<import('node:net').Socket>} set */
  const idlest = (set) => {
    let best = null;
    for (const sock of set) {
      const st = stateOf(sock);
      if (st.busy === 0 && (!best || st.lastActive < stateOf(best).lastActive)) best = sock;
    }
    return best;
  };

  /** May this new connection stay? Closes an idle one to make room when that is the rule's answer. */
  const admit = (/** @type {string} */ client) => {
    const mine = byClient.get(client);
    if (settings.maxConnectionsPerClient > 0 && (mine?.size ?? 0) >= settings.maxConnectionsPerClient) {
      const idle = mine && idlest(mine);
      if (!idle) return busy(mine?.size ?? 0, 'server.maxConnectionsPerClient', settings.maxConnectionsPerClient);
      idle.destroy();
      metrics.connectionsClosed.inc({ reason: 'client_share' });
      return null;
    }
    if (settings.maxConnections > 0 && open >= settings.maxConnections) {
      let heaviest = null;
      for (const set of byClient.values()) if (!heaviest || set.size > heaviest.size) heaviest = set;
      const idle = heaviest && idlest(heaviest);
      if (!idle) return busy(open, 'server.maxConnections', settings.maxConnections);
      idle.destroy();
      metrics.connectionsClosed.inc({ reason: 'server_full' });
    }
    return null;
  };

  // Node's own connection listener (the HTTP parser) runs only for connections admitted.
  const parsers = server.listeners('connection');
  server.removeAllListeners('connection');
  server.on('connection', (/** @type {import('node:net').Socket} */ socket) => {
    const client = clientOf(socket.remoteAddress);
    const refused = admit(client);
    if (refused) {
      metrics.connectionsRefused.inc({ reason: refused.details?.limit === 'server.maxConnections' ? 'server_full' : 'client_share' });
      refuse(socket, refused);
      return;
    }
    /** @type {SocketState} */
    const st = { client, busy: 0, lastActive: performance.now(), current: null, waiting: [], pausedHere: false, stall: null, overBound: false };
    /** @type {any} */ (socket)[STATE] = st;
    let set = byClient.get(client);
    if (!set) byClient.set(client, (set = new Set()));
    set.add(socket);
    open++;
    socket.once('close', () => {
      open--;
      set.delete(socket);
      if (set.size === 0 && byClient.get(client) === set) byClient.delete(client);
      if (st.stall) clearInterval(st.stall);
      st.waiting.length = 0;
    });
    for (const l of parsers) l.call(server, socket);
  });

  /** Stop reading the socket (as Node's HTTP server does itself while a response queue is long). @param {import('node:net').Socket} socket */
  const pauseReading = (socket) => {
    // Again each time: Node's own 'drain' handler resumes a socket it finds paused.
    stateOf(socket).pausedHere = true;
    /** @type {any} */ (socket)._paused = true;
    socket.pause();
  };
  /** @param {import('node:net').Socket} socket */
  const resumeReading = (socket) => {
    const st = stateOf(socket);
    if (!st.pausedHere) return;
    st.pausedHere = false;
    if (socket.writableNeedDrain) return; // Node resumes it on 'drain'
    /** @type {any} */ (socket)._paused = false;
    /** @type {any} */ (socket).parser?.resume();
    socket.resume();
  };

  /** A socket's requests wait for its client to read (counted once per time). @param {SocketState} st */
  const overBound = (st) => {
    if (st.overBound) return;
    st.overBound = true;
    metrics.socketBackpressure.inc({ action: 'paused' });
  };

  /**
   * While requests wait on a socket or its unwritten bytes are over the bound: every socketStallMs, a socket over the
   * bound whose unwritten bytes did not go down is closed (its client is not reading).
   * @param {import('node:net').Socket} socket
   */
  const watch = (socket) => {
    const st = stateOf(socket);
    if (st.stall) return;
    let last = socket.writableLength;
    st.stall = setInterval(() => {
      const pending = socket.writableLength;
      if (socket.destroyed || (st.waiting.length === 0 && pending <= settings.socketBufferBytes)) {
        clearInterval(/** @type {NodeJS.Timeout} */ (st.stall));
        st.stall = null;
        st.overBound = false;
      } else if (pending > settings.socketBufferBytes) {
        overBound(st);
        if (pending >= last) {
          metrics.socketBackpressure.inc({ action: 'closed' });
          socket.destroy();
        }
      }
      last = pending;
    }, settings.socketStallMs);
    st.stall.unref();
  };

  /** The next waiting request's turn, once the socket's unwritten bytes are under the bound. @param {import('node:net').Socket} socket */
  const next = (socket) => {
    const st = stateOf(socket);
    if (st.current || socket.destroyed) return;
    if (st.waiting.length === 0) { resumeReading(socket); return; }
    if (socket.writableLength <= settings.socketBufferBytes) {
      st.overBound = false;
      const go = /** @type {() => void} */ (st.waiting.shift());
      // Nothing waits behind it any more: read on (its own body, if any, may still be arriving).
      if (st.waiting.length === 0) resumeReading(socket);
      go();
      return;
    }
    if (st.overBound) return;
    overBound(st);
    watch(socket);
    socket.once('drain', () => next(socket));
  };

  // Requests reach the app (Fastify's handler) one at a time per connection, at their turn; a request waiting costs
  // only what Node's parser made of it.
  const handlers = server.listeners('request');
  server.removeAllListeners('request');
  server.on('request', (/** @type {import('node:http').IncomingMessage} */ req, /** @type {import('node:http').ServerResponse} */ res) => {
    const socket = req.socket;
    const st = stateOf(socket);
    const run = () => { for (const handle of handlers) handle.call(server, req, res); };
    if (!st) { run(); return; }
    // Closed already (the rest of a burst it sent, still parsed): never handled.
    if (socket.destroyed) return;
    st.busy++;
    st.lastActive = performance.now();
    res.once('close', () => {
      st.busy--;
      st.lastActive = performance.now();
      if (st.current !== res) return;
      st.current = null;
      next(socket);
    });
    const start = () => { st.current = res; run(); };
    if (!st.current && st.waiting.length === 0 && socket.writableLength <= settings.socketBufferBytes) { start(); return; }
    if (st.waiting.length >= settings.maxPipelined) {
      metrics.socketBackpressure.inc({ action: 'closed' });
      socket.destroy();
      return;
    }
    st.waiting.push(start);
    pauseReading(socket);
    watch(socket);
    next(socket);
  });

  return {
    /** Open connections by client (for tests). */
    connections: () => new Map([...byClient].map(([c, set]) => [c, set.size])),
  };
}
