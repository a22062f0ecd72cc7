// Node's reason phrases by status code (http.STATUS_CODES), for replies made without a server.
import { nodeHttp } from './node-http.js';

export const STATUS_CODES: Readonly<Record<number, string | undefined>> = nodeHttp.STATUS_CODES;
