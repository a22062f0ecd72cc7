// Dispatcher as undici types it: constructible, a subclass may implement only dispatch, typed
// events; the top-level connect() / upgrade() without a callback return a Promise.
import { Agent, connect, Dispatcher, upgrade, type errors } from 'ferro';

export const base = new Dispatcher();

export class OnlyDispatch extends Dispatcher {
  override dispatch(_options: Dispatcher.DispatchOptions, _handler: Dispatcher.DispatchHandler): boolean {
    return true;
  }
}

const agent = new Agent();
agent.on('connect', (origin, targets) => {
  const url: URL = origin;
  const first: Dispatcher | undefined = targets[0];
  void [url, first];
});
agent.on('disconnect', (_origin, _targets, error) => {
  const e: errors.UndiciError = error;
  void e;
});
agent.once('drain', (origin) => void origin.host);
agent.on('something-else', () => {});
export const listeners: ((origin: URL) => void)[] = agent.listeners('drain');
export const emitted: boolean = base.emit('drain', new URL('http://127.0.0.1'));
agent.on('drain', (origin) => {
  // @ts-expect-error the listener's argument is typed (a URL), not any
  const n: number = origin;
  void n;
});

export const composed: Dispatcher.ComposedDispatcher = agent.compose([]);

export async function tunnels(): Promise<void> {
  const c: Dispatcher.ConnectData = await connect('http://127.0.0.1');
  const u: Dispatcher.UpgradeData = await upgrade('http://127.0.0.1');
  // @ts-expect-error with a callback, nothing is returned
  const none: Promise<unknown> = connect('http://127.0.0.1', () => {});
  void [c, u, none];
}
