// How long an operator's command waits for the database: longer than a request (DB_TIMEOUT_MS, 2 s by default),
// since an operator running `npm run keys -- list` against a busy server would rather wait than be refused.
// It bounds the admin socket's routes (the server's side of the CLIs) and the CLIs' own connection to the
// database; the CLI's request over the socket waits a little longer still (client.ts), to hear the server's answer.

/** The database deadline of an admin command (ms); never shorter than DB_TIMEOUT_MS. */
export const ADMIN_DB_TIMEOUT_MS = 20_000;

/** The deadline of a command with DB_TIMEOUT_MS `requestTimeoutMs`. */
export const adminDbTimeout = (requestTimeoutMs: number) => Math.max(requestTimeoutMs, ADMIN_DB_TIMEOUT_MS);

/** What the CLIs' --help says of it. */
export const ADMIN_DEADLINE_HELP = `Each command waits up to ${ADMIN_DB_TIMEOUT_MS / 1000} s for the database (or DB_TIMEOUT_MS when longer), where a request waits DB_TIMEOUT_MS.`;
