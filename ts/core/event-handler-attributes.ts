// Event handler attributes (HTML "event handlers": `onopen`, `onmessage`, …) for EventTarget
// classes: each is one listener for its event type, replaced when the attribute is assigned and
// removed when it is given a non-object, called with `this` as the target. A non-callable object
// is kept (the getter returns it) but does nothing, as WebIDL's EventHandler conversion has it.
type Slot = { listener: EventListener; handler: unknown };

const slots = new WeakMap<EventTarget, Map<string, Slot>>();
const { addEventListener, removeEventListener } = EventTarget.prototype;

/**
 * Defines `on<type>` for each of `types` on `proto` (enumerable accessors, as WebIDL attributes
 * are). The class declares their types (`declare onopen: …`).
 */
export function defineEventHandlerAttributes(proto: EventTarget, types: readonly string[]): void {
  for (const type of types) {
    Object.defineProperty(proto, `on${type}`, {
      enumerable: true,
      configurable: true,
      get(this: EventTarget): unknown {
        return slots.get(this)?.get(type)?.handler ?? null;
      },
      set(this: EventTarget, fn: unknown): void {
        let own = slots.get(this);
        if (own === undefined) slots.set(this, (own = new Map()));
        const old = own.get(type);
        // EventTarget's own methods: a subclass's overrides are for callers, not for this.
        if (old !== undefined) removeEventListener.call(this, type, old.listener);
        own.delete(type);
        if ((typeof fn !== 'object' && typeof fn !== 'function') || fn === null) return;
        const listener = (ev: Event): unknown => (typeof fn === 'function' ? (fn as (ev: Event) => unknown).call(this, ev) : undefined);
        own.set(type, { listener, handler: fn });
        addEventListener.call(this, type, listener);
      },
    });
  }
}
