// npm run openapi: writes openapi/openapi.json from the routes, as served on embedded defaults.
// A test fails when the committed copy differs from what the code generates.
import { writeFileSync } from 'node:fs';
import { generateOpenApi } from './openapi-document.ts';

const path = new URL('../openapi/openapi.json', import.meta.url);
writeFileSync(path, (await generateOpenApi()) + '\n');
console.log(`wrote ${path.pathname}`);
