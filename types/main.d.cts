// The package entry's declarations for CommonJS consumers (TypeScript `module: node16` / `nodenext`
// with CommonJS output). The runtime is the one ESM build, loaded by Node's require(esm) (Node 20.19+,
// 22.12+; it has no top-level await); this file only tells TypeScript that `require('ferro')` gives
// the ESM namespace, so the import is not refused with TS1479.
import type * as ferro from '../dist/main.js' with { 'resolution-mode': 'import' };
export = ferro;
