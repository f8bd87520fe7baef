// The OpenAPI document as generated on embedded defaults (no env), serialised stably.
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';

export async function generateOpenApi(): Promise<string> {
  const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent' }));
  await app.ready();
  const doc = app.swagger();
  await app.close();
  return JSON.stringify(doc, null, 2);
}
