// The API keys' variables, declared as data with the other env builders and listed by config.ts in its
// access section; kept apart so the keys CLI can parse exactly these without loading the whole server's config.
import { env } from '../../lib/env.ts';

export const KEYS_ENV = {
  API_KEYS: env.optionalText('Comma-separated raw API keys accepted in x-api-key, held in memory only (for development; real keys live in the database: npm run keys).'),
  API_KEYS_FILE: env.text(
    './data/api-keys.json',
    'Key file of earlier versions (hashed keys): imported into the database once, when it opens; a corrupt file stops start-up. A missing file = nothing to import.',
    'a file path',
  ),
  API_KEYS_RELOAD_MS: env.int(
    100,
    3_600_000,
    2000,
    'How often each instance checks the database for key changes (ms): without Redis, the longest a revocation takes to reach the other instances.',
  ),
};
