// npm run docs: rewrites the generated files (openapi/openapi.json, .env.example, the configuration
// reference docs/operating/configuration.md, the providers table of docs/using/providers.md) from the
// code. A test fails when a committed copy differs from what this writes.
import { writeFileSync } from 'node:fs';
import { generatedFiles, ROOT } from './generated-docs.ts';

for (const file of await generatedFiles()) {
  writeFileSync(new URL(file.path, ROOT), file.content);
  console.log(`wrote ${file.path}`);
}
