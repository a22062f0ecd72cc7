// The `mockErrors` namespace object: the error classes specific to mocking, as undici groups them.
import { MockNotMatchedError } from '../core/errors.js';

export const mockErrors = { MockNotMatchedError } as const;

// Also a namespace of instance types, as undici's (`let e: mockErrors.MockNotMatchedError`).
export declare namespace mockErrors {
  export type MockNotMatchedError = InstanceType<typeof MockNotMatchedError>;
}
