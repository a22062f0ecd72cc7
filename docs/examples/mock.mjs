import { MockAgent } from 'ferro';

const mockAgent = new MockAgent();
mockAgent.disableNetConnect();
mockAgent.get('https://api.example.com').intercept({ path: '/users/1', method: 'GET' }).reply(200, { id: 1 });

const { statusCode, body } = await mockAgent.request({ origin: 'https://api.example.com', path: '/users/1', method: 'GET' });
console.log(statusCode, await body.json());
mockAgent.assertNoPendingInterceptors();
await mockAgent.close();
