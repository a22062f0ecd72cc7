// The package's entry point: every named export (index.ts), and a default export for code
// written against undici's CommonJS module (a default import of the package, `undici.request(…)`):
// a plain object holding each named export, as undici's module.exports is. It lives here rather
// than in index.ts because it needs index's namespace, which index cannot import without a cycle.
import * as named from './index.js';

export * from './index.js';

const all: Record<string, unknown> = {};
for (const key of Object.keys(named)) all[key] = (named as Record<string, unknown>)[key];

const ferro = all as typeof named;
export default ferro;
