// The two files of undici the API client loads instead of its index (client.ts, loadApiAgent).
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';
  const UndiciAgent: typeof Agent;
  export default UndiciAgent;
}

declare module 'undici/lib/interceptor/retry.js' {
  import type { interceptors } from 'undici';
  const retry: typeof interceptors.retry;
  export default retry;
}
