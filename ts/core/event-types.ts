// The few DOM event types ferro's declarations name, declared here because @types/node keeps
// them module-private and a project without the DOM lib has no global ones. Structurally the
// DOM's own, so the DOM lib's values are accepted where these are asked for.
export interface EventInit {
  bubbles?: boolean;
  cancelable?: boolean;
  composed?: boolean;
}

export interface AddEventListenerOptions extends EventListenerOptions {
  once?: boolean;
  passive?: boolean;
  signal?: AbortSignal;
}

export type EventListenerOrEventListenerObject = ((event: Event) => void) | { handleEvent(event: Event): void };
