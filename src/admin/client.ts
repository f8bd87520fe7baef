// The CLIs' side of the admin channel: one JSON request over the server's Unix socket.
import { request } from 'node:http';

/** No server listens on the socket (it is missing, or left by a server that stopped). */
export class AdminUnreachableError extends Error {
  override name = 'AdminUnreachableError';
}

/** An answer other than 200: the server's `{ error }` message. */
export class AdminRequestError extends Error {
  override name = 'AdminRequestError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function adminRequest<T>(socketPath: string, method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = 30_000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      { socketPath, method, path, timeout: timeoutMs, headers: payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {} },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let parsed: { data?: T; error?: string };
          try {
            parsed = JSON.parse(text);
          } catch {
            return reject(new AdminRequestError(res.statusCode ?? 0, `the admin channel answered ${res.statusCode} with something other than JSON`));
          }
          if (res.statusCode === 200) resolve(parsed.data as T);
          else reject(new AdminRequestError(res.statusCode ?? 0, parsed.error ?? `admin request failed (${res.statusCode})`));
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`the admin channel did not answer within ${timeoutMs} ms`)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') reject(new AdminUnreachableError(`no server answers on ${socketPath} (${err.code})`));
      else reject(err);
    });
    req.end(payload);
  });
}
