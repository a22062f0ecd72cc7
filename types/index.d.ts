// ferro/types: everything ferro exports (undici's types/index.d.ts).
export * from '../dist/main.js';
export { default } from '../dist/main.js';
