// The `interceptors` namespace: pre-built interceptors for Dispatcher.compose.
import { decompress } from './decompress.js';

export const interceptors = {
  decompress,
};
export type { DecompressInterceptorOptions } from './decompress.js';
