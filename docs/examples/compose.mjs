import { Agent } from 'ferro';
import { startServer } from './_server.mjs';

const server = await startServer();

// An interceptor wraps dispatch; with several, the last one sees the request first.
const tag = (name) => (dispatch) => (opts, handler) => {
  console.log('interceptor', name);
  return dispatch({ ...opts, headers: { ...opts.headers, [`x-${name}`]: '1' } }, handler);
};
const agent = new Agent().compose(tag('inner'), tag('outer'));

const { body } = await agent.request({ origin: server.origin, path: '/composed', method: 'GET' });
console.log(await body.text());

await agent.close();
server.close();
