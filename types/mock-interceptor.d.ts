// ferro/types/mock-interceptor: the names undici declares in its types/mock-interceptor.d.ts.
// From the module itself: the package root exports MockInterceptor / MockScope as types only.
export { MockInterceptor, MockScope, type Interceptable } from '../dist/mock/mock-interceptor.js';
