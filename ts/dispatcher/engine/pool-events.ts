// An engine pool's connection events, as the Dispatcher interface reports them: 'connect',
// 'disconnect' and 'connectionError' on the dispatcher, the diagnostics channels, and the bridged
// sockets a pool asks for.
import type { PoolSink } from '../../native/events.js';
import { engineError, ErrorCode } from '../../native/error-codes.js';
import { SocketError } from '../../core/errors.js';
import { connectionEvents } from '../../core/diagnostics.js';
import type { Dispatcher } from '../dispatcher.js';
import { refuseBridge, type Bridge } from './bridged-sockets.js';

/** The engine's message when the peer closed the connection (crates/engine/src/conn/http1.rs). */
const PEER_CLOSED = 'other side closed';

export class PoolEvents implements PoolSink {
  readonly #origin: URL;
  readonly #dispatcher: Dispatcher;
  readonly #bridge: Bridge | null;
  /** Called when a connection turns out to be an h2 session (busy / drain then follow streams). */
  readonly #onH2: () => void;
  /** What the last connection spoke, for the next connection's debug line. */
  #version: 'h1' | 'h2' = 'h1';

  constructor(origin: URL, dispatcher: Dispatcher, bridge: Bridge | null, onH2: () => void) {
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
    this.#version = info.startsWith('h2|') ? 'h2' : 'h1';
    if (this.#version === 'h2') this.#onH2();
    this.#dispatcher.emit('connect', this.#origin, [this.#dispatcher]);
  }

  onEngineDisconnected(code: number, message: string): void {
    // The engine counts a peer's close of an idle connection as informational (nothing was lost),
    // undici reports it as SocketError 'other side closed': users branch on that class and code.
    const err = code === ErrorCode.Info && message === PEER_CLOSED ? new SocketError(message) : engineError(code, '', message);
    // After what the same batch finished: a response's body emits 'end' on later ticks, and
    // undici's 'disconnect' (a socket 'close') comes after it.
    setImmediate(() => this.#dispatcher.emit('disconnect', this.#origin, [this.#dispatcher], err));
  }

  onEngineConnectFailed(code: number, errno: string, message: string): void {
    const err = engineError(code, errno, message);
    this.#bridge?.connectFailed(code, message);
    connectionEvents.connectError(this.#origin, 'h1', err);
    this.#dispatcher.emit('connectionError', this.#origin, [this.#dispatcher], err);
  }

  onEngineBridgeOpen(bridgeId: number): void {
    if (this.#bridge !== null) this.#bridge.open(bridgeId);
    else refuseBridge(bridgeId);
  }
}
