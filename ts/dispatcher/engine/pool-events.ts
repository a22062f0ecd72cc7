// An engine pool's connection events, as the Dispatcher interface reports them: 'connect',
// 'disconnect' and 'connectionError' on the dispatcher, the diagnostics channels, and the bridged
// sockets a pool asks for.
import type { PoolSink } from '../../native/events.js';
import { engineError, ErrorCode } from '../../native/error-codes.js';
import { parseSocketInfo } from '../../native/addrs.js';
import { ClientDestroyedError, SocketError } from '../../core/errors.js';
import { connectionEvents } from '../../core/diagnostics.js';
import type { Dispatcher } from '../dispatcher.js';
import { refuseBridge, type Bridge } from './bridged-sockets.js';

/** The engine's message when the peer closed the connection (crates/engine/src/conn/http1.rs). */
const PEER_CLOSED = 'other side closed';
/** The engine's message when a closing pool ended a connection that has nothing left to do. */
const POOL_CLOSED = 'closed';

/** The error a connection's end is reported with, in undici's classes. */
function disconnectError(code: number, message: string, socket: string): Error {
  if (code === ErrorCode.Info) {
    // The engine counts a peer's close of an idle connection as informational (nothing was lost),
    // undici reports it as SocketError 'other side closed': users branch on that class and code.
    if (message === PEER_CLOSED) return new SocketError(message, parseSocketInfo(socket));
    // undici's close() destroys what it closes.
    if (message === POOL_CLOSED) return new ClientDestroyedError();
  }
  return engineError(code, '', message, socket);
}

export class PoolEvents implements PoolSink {
  readonly #origin: URL;
  readonly #dispatcher: Dispatcher;
  readonly #bridge: Bridge | null;
  /** Called when a connection turns out to be an h2 or h3 session (busy / drain then follow streams). */
  readonly #onH2: (version: 'h2' | 'h3') => void;
  /** What the last connection spoke, for the next connection's debug line. */
  #version: 'h1' | 'h2' | 'h3' = 'h1';
  /** Connections reported connected and not yet disconnected (what close / destroy end). */
  #live = 0;

  constructor(origin: URL, dispatcher: Dispatcher, bridge: Bridge | null, onH2: (version: 'h2' | 'h3') => void) {
    this.#origin = origin;
    this.#dispatcher = dispatcher;
    this.#bridge = bridge;
    this.#onH2 = onH2;
  }

  onEngineConnecting(): void {
    // ALPN has not spoken yet: say what this origin's last connection turned out to speak.
    connectionEvents.connecting(this.#origin, this.#version);
  }

  onEngineConnected(info: string): void {
    connectionEvents.connected(this.#origin, info);
    this.#version = info.startsWith('h2|') ? 'h2' : info.startsWith('h3|') ? 'h3' : 'h1';
    if (this.#version !== 'h1') this.#onH2(this.#version);
    this.#live++;
    this.#dispatcher.emit('connect', this.#origin, [this.#dispatcher]);
  }

  onEngineDisconnected(code: number, message: string, socket: string): void {
    this.#live--;
    const err = disconnectError(code, message, socket);
    // After what the same batch finished: a response's body emits 'end' on later ticks, and
    // undici's 'disconnect' (a socket 'close') comes after it.
    setImmediate(() => this.#dispatcher.emit('disconnect', this.#origin, [this.#dispatcher], err));
  }

  /**
   * The engine pool is gone (close, destroy, or replaced for another servername): the connections
   * it still held ended with it, and the engine reports nothing more. Each is a 'disconnect' with `err`, as undici's sockets are
   * destroyed with it; then `done`. On a later turn, after what the last batch finished (a body's
   * 'end'), as onEngineDisconnected.
   */
  endAll(err: Error, done: () => void): void {
    const n = this.#live;
    this.#live = 0;
    if (n === 0) return done();
    setImmediate(() => {
      try {
        for (let i = 0; i < n; i++) this.#dispatcher.emit('disconnect', this.#origin, [this.#dispatcher], err);
      } finally {
        done(); // a throwing listener must not leave close() pending
      }
    });
  }

  onEngineConnectFailed(code: number, errno: string, message: string, socket: string): void {
    const err = engineError(code, errno, message, socket);
    this.#bridge?.connectFailed(code, message);
    connectionEvents.connectError(this.#origin, 'h1', err);
    this.#dispatcher.emit('connectionError', this.#origin, [this.#dispatcher], err);
  }

  onEngineBridgeOpen(bridgeId: number): void {
    if (this.#bridge !== null) this.#bridge.open(bridgeId);
    else refuseBridge(bridgeId);
  }
}
