// API keys are configured as digests, never as keys (server.apiKeyHashes): the one digest function, for the
// server that checks presented keys and for the commands that configure a key (the demo's).
import crypto from 'node:crypto';

/**
 * The SHA-256 hex digest of an API key, as server.apiKeyHashes holds it (`printf %s "$KEY" | sha256sum`).
 * @param {string} key
 */
export const keyDigest = (key) => crypto.createHash('sha256').update(key, 'utf8').digest('hex');
