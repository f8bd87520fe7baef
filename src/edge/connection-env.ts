// The connection limits' settings (connection-admission.ts), declared beside it and listed by config.ts.
import { env } from '../lib/env.ts';

export const CONNECTION_ENV = {
  MAX_CONNECTIONS: env.int(1, 1_000_000, 10_000, 'Open connections at most, all clients together; one more is closed as it arrives (keep it below the open-file limit, ulimit -n).'),
  MAX_CONNECTIONS_PER_IP: env.int(
    1,
    1_000_000,
    256,
    "Open connections at most from one client address (an IPv6 client's /64); one more from it is closed as it arrives, nobody else's. A peer named in TRUST_PROXY is counted in MAX_CONNECTIONS only.",
  ),
  MAX_PENDING_CONNECTIONS_PER_IP: env.int(
    1,
    1_000_000,
    128,
    'Connections from one client address that have not yet sent a whole first request, at most; one more from it is closed as it arrives. A client that opens many connections at once (a load balancer warming its pool, an agent fanning out) has them all pending for a moment.',
  ),
  NEW_CONNECTIONS_PER_IP_PER_S: env.int(
    1,
    1_000_000,
    100,
    'New connections one client address may open per second, on average over 2 s (it may open twice this at once); one more is closed as it arrives. Its own connections are its only cost: each parses up to MAX_PIPELINED_REQUESTS requests before the server can close it.',
  ),
  FIRST_BYTE_TIMEOUT_MS: env.int(100, 600_000, 5000, 'A connection that has sent nothing for this long after it opened is closed (ms); one that is sending its request has REQUEST_TIMEOUT_MS.'),
};
