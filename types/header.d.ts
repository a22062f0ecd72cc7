// ferro/types/header: undici's header record types.
/** Response headers as node:http types them. */
export type IncomingHttpHeaders = Record<string, string | string[] | undefined>;
/** Headers a caller may send: values may be numbers, as with node:http. */
export type OutgoingHttpHeaders = Record<string, number | string | string[] | undefined>;
/** A plain header object (undici narrows the known names; any name is accepted here). */
export type HeaderRecord = Record<string, string | undefined>;
