// A request's own `servername` over https, as undici's Client treats it: a connection verified for
// one name never carries a request for another. A request for another name waits until the
// requests under way are done; the dispatcher's connections are then replaced by ones made for
// that name (undici: 'disconnect' with 'servername changed'), and requests keep their order.
import type { EngineRequest } from './engine-request.js';

interface Held {
  req: EngineRequest;
  name: string;
  send: () => void;
}

export class ServernameSwitch {
  /** The name the dispatcher's connections are made for now. */
  #current: string;
  readonly #default: string;
  /** Requests waiting for a switch, and every request dispatched behind one, in order. */
  readonly #held: Held[] = [];
  #releasing = false;

  constructor(defaultName: string) {
    this.#current = this.#default = defaultName;
  }

  /** The name a request asking for `servername` goes to (the dispatcher's own when it names none). */
  nameFor(servername: unknown): string {
    return typeof servername === 'string' && servername !== '' ? servername : this.#default;
  }

  /** A request for `name` must wait: the connections are another name's, or requests wait before it. */
  mustWait(name: string): boolean {
    return name !== this.#current || this.#held.length > 0;
  }

  /** Requests wait for a switch (checked first: settle() is for when they do). */
  get waiting(): boolean {
    return this.#held.length > 0;
  }

  hold(req: EngineRequest, name: string, send: () => void): void {
    this.#held.push({ req, name, send });
  }

  /**
   * After a request settled or was held (`open()`: the dispatcher's unsettled requests). With none
   * left in the engine, switches to the first waiting request's name (`replace` makes the new
   * connections) and sends the requests for it, in order, up to the first for another name.
   */
  settle(open: () => number, replace: (name: string) => void): void {
    if (this.#releasing) return;
    for (let i = this.#held.length - 1; i >= 0; i--) if (this.#held[i]!.req.done) this.#held.splice(i, 1);
    if (this.#held.length === 0 || open() > this.#held.length) return;
    const name = this.#held[0]!.name;
    if (name !== this.#current) {
      this.#current = name;
      replace(name);
    }
    this.#releasing = true;
    try {
      while (this.#held.length > 0 && this.#held[0]!.name === name) this.#held.shift()!.send();
    } finally {
      this.#releasing = false;
    }
    // A handler may have settled its request as it started: the next switch may be due already.
    if (this.#held.length > 0) this.settle(open, replace);
  }
}
