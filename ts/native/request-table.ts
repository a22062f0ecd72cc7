// Open requests by id, for routing the engine's events (native/engine.ts). Ids come from a
// counter and are not reused for 2^32 requests, so a late event for a closed request finds
// nothing.
//
// Not a Map, because of how V8 collects one whose keys churn. This table gets one insert and one
// delete per request, and a Map rebuilds its table every few hundred of those. V8 links each
// retired table to the next one, for iterators that are still running. Once a retired table has
// moved to the old generation, that link keeps every later table, and every request those tables
// held, alive through young-generation collections until the next full one. Measured on the bench
// server (small `request()`, 100 in flight): 3 µs of GC per request with a Map, 1 µs with this
// table, and 6 full collections per 60,000 requests instead of 2 (docs/memory.md).
//
// Here a slot is `id & mask` in two plain arrays that are overwritten in place. A request still
// open when a newer id needs its slot moves to a small Map of its own. Only long-lived requests
// (long polls, tunnels) end up there. The ring doubles when it is half full.

const INITIAL_CAPACITY = 1024;

export class RequestTable<T> {
  /** The id in each slot; 0 for an empty slot (ids start at 1). */
  #ids = new Uint32Array(INITIAL_CAPACITY);
  #values: (T | undefined)[] = new Array<T | undefined>(INITIAL_CAPACITY).fill(undefined);
  #mask = INITIAL_CAPACITY - 1;
  /** Entries pushed out of their slot by a newer id while still open. */
  #displaced = new Map<number, T>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  get(id: number): T | undefined {
    const slot = id & this.#mask;
    if (this.#ids[slot] === id) return this.#values[slot];
    return this.#displaced.size === 0 ? undefined : this.#displaced.get(id);
  }

  /** Adds `id` (not already present; ids are never 0). */
  add(id: number, value: T): void {
    this.#size++;
    this.#place(id, value);
  }

  /** Replaces the value of an id that is present; does nothing otherwise. */
  replace(id: number, value: T): void {
    const slot = id & this.#mask;
    if (this.#ids[slot] === id) this.#values[slot] = value;
    else if (this.#displaced.has(id)) this.#displaced.set(id, value);
  }

  /** Removes `id`; false if it was not present. */
  delete(id: number): boolean {
    const slot = id & this.#mask;
    if (this.#ids[slot] === id) {
      this.#ids[slot] = 0;
      this.#values[slot] = undefined;
    } else if (this.#displaced.size === 0 || !this.#displaced.delete(id)) {
      return false;
    }
    this.#size--;
    return true;
  }

  *values(): IterableIterator<T> {
    const values = this.#values;
    for (let slot = 0; slot < values.length; slot++) {
      const v = values[slot];
      if (v !== undefined) yield v;
    }
    yield* this.#displaced.values();
  }

  #place(id: number, value: T): void {
    const slot = id & this.#mask;
    if (this.#ids[slot] !== 0) {
      if (this.#size > (this.#mask + 1) >>> 1) {
        this.#grow();
        this.#place(id, value);
        return;
      }
      this.#displaced.set(this.#ids[slot]!, this.#values[slot]!);
    }
    this.#ids[slot] = id;
    this.#values[slot] = value;
  }

  /** Doubles the ring. Entries keep distinct slots: the new mask only adds a bit to the old. */
  #grow(): void {
    const ids = this.#ids;
    const values = this.#values;
    const capacity = ids.length * 2;
    this.#ids = new Uint32Array(capacity);
    this.#values = new Array<T | undefined>(capacity).fill(undefined);
    this.#mask = capacity - 1;
    for (let slot = 0; slot < ids.length; slot++) {
      const id = ids[slot]!;
      if (id === 0) continue;
      const to = id & this.#mask;
      this.#ids[to] = id;
      this.#values[to] = values[slot];
    }
  }
}
