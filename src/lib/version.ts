/** Release version of the server (kept equal to package.json's by a test). */
export const VERSION = '1.0.0';

/**
 * Versions of the two published interfaces, as their contracts name them: interface A (token risk)
 * is 1.0.0; interface B (market data) is 1.0.0-mvp — its OpenAPI `info.version`, the agent card's
 * `version` and `/v1/status` say so.
 */
export const INTERFACE_VERSION = { risk: '1.0.0', market: '1.0.0-mvp' } as const;
