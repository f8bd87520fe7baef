// Builders for documented response fields, shared by the routes' data schemas.
import { z } from 'zod';

/** A number the provider may not give (then null), described. */
export const numberOrNull = (what: string) => z.number().nullable().describe(what);

/** A time, ISO-8601 UTC, described. */
export const isoField = (what: string) => z.string().describe(`${what}, ISO-8601 UTC`);
