// The OpenAPI document of the API without a running server: the app is built with no model, store or Redis (routes
// are registered, never called), for the generated TypeScript types (scripts/api-types.js) and other tools.
import { DEFAULT_CONFIG } from '../pipeline/config.js';
import { buildApp } from './app.js';
import { Metrics } from './prometheus.js';
import { ResultCache } from './cache.js';

/**
 * The document as /docs/json serves it, with the default config (so that it does not depend on the environment).
 * @returns {Promise<any>}
 */
export async function openapiDocument() {
  /** @type {import('../pipeline/config.js').Config} */
  const config = JSON.parse(JSON.stringify(DEFAULT_CONFIG));
  const ctx = /** @type {import('./app.js').AppContext} */ ({
    config, models: /** @type {any} */ (null), hub: null, metrics: new Metrics(), status: { shuttingDown: false }, relatedCache: new ResultCache(0),
  });
  const app = await buildApp(ctx, { logger: false });
  try {
    await app.ready();
    return JSON.parse(JSON.stringify(app.swagger()));
  } finally {
    await app.close();
  }
}
