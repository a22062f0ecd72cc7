// The cookie record the Headers helpers read and write (undici's `Cookie`).

export interface Cookie {
  name: string;
  value: string;
  /** A Date, or milliseconds since the epoch. */
  expires?: Date | number;
  /** Seconds. */
  maxAge?: number;
  domain?: string;
  path?: string;
  secure?: boolean;
  httpOnly?: boolean;
  sameSite?: 'Strict' | 'Lax' | 'None';
  /** Attributes this parser does not know, as `name=value`. */
  unparsed?: string[];
}
