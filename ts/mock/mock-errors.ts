// The `mockErrors` namespace object: the error classes specific to mocking, as undici groups them.
import { MockNotMatchedError } from '../core/errors.js';

export const mockErrors = { MockNotMatchedError } as const;
