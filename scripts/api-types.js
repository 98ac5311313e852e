// TypeScript types of the REST API, generated from its OpenAPI document by openapi-typescript: types/api.d.ts,
// exported by the package as `scdv-recommender/api`. `npm run types:api` rewrites it; tests/server/api-types.test.js
// fails when the committed file is not what this generates (so it cannot go stale).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { openapiDocument } from '../server/openapi-document.js';

export const API_TYPES_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'types', 'api.d.ts');

const HEADER = '// Generated from the OpenAPI document (/docs/json) by `npm run types:api` (openapi-typescript). Do not edit.\n';

/** The text of types/api.d.ts for the current API. */
export async function apiTypes() {
  const ast = await openapiTS(/** @type {any} */ (await openapiDocument()), { alphabetize: true });
  return HEADER + astToString(ast);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  fs.writeFileSync(API_TYPES_FILE, await apiTypes());
  process.stdout.write(`wrote ${path.relative(process.cwd(), API_TYPES_FILE)}\n`);
}
