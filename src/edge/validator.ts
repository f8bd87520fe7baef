// The one validator compiler of the app: zod's (fastify-type-provider-zod), with the query string's names
// checked first against the names the route's schema declares. A parameter the route does not take is a
// 400 naming it and listing the accepted ones (a misspelt `timeframe` would otherwise be ignored, and the
// call answered, or paid for, with the default); a parameter given twice is a 400 saying so (which of the
// two was meant cannot be guessed). Every route declares its query (an empty one when it takes none: see
// NO_QUERY), so the rule holds for all of them from this one place.
//
// It runs where every parameter check runs, after the access hooks: a paid call without credentials gets its
// 402 challenge before any parameter is looked at (access-control.ts), and a call with a payment is refused
// here before the payment is verified, so nothing is charged for it.
import type { FastifySchemaCompiler } from 'fastify';
import { validatorCompiler as zodValidatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { BadRequestError } from '../lib/errors.ts';
import { nearestName } from '../lib/nearest-name.ts';

/** The query of a route that takes no parameters: any parameter is then refused. */
export const NO_QUERY = z.object({});

/** Fastify's parsed query string: a repeated name comes as an array of its values. */
type ParsedQuery = Record<string, string | string[] | undefined>;

export const validatorCompiler: FastifySchemaCompiler<z.ZodType> = (route) => {
  const validate = zodValidatorCompiler(route);
  if (route.httpPart !== 'querystring' || !(route.schema instanceof z.ZodObject)) return validate;
  const accepted = Object.keys(route.schema.shape);
  return (data: unknown) => {
    const problem = queryNamesProblem(data as ParsedQuery, accepted);
    return problem === undefined ? validate(data) : { error: new BadRequestError(problem) };
  };
};

/** What is wrong with the names of a query (unknown or repeated), in one message; undefined when nothing is. */
export function queryNamesProblem(query: ParsedQuery, accepted: readonly string[]): string | undefined {
  const problems: string[] = [];
  const unknown: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (!accepted.includes(name)) unknown.push(name);
    else if (Array.isArray(value)) problems.push(`query parameter '${name}' was given ${value.length} times; give it once`);
  }
  if (unknown.length) problems.unshift(unknownMessage(unknown, accepted));
  return problems.length ? problems.join('; ') : undefined;
}

/** How many unknown names a message lists (a request may send hundreds). */
const LISTED = 5;

function unknownMessage(unknown: string[], accepted: readonly string[]): string {
  const shown = unknown.slice(0, LISTED).map((name) => `'${name.length > 64 ? `${name.slice(0, 64)}…` : name}'${hint(name, accepted)}`);
  const names = unknown.length > LISTED ? `${shown.join(', ')} and ${unknown.length - LISTED} more` : shown.join(', ');
  const what = `unknown query parameter${unknown.length > 1 ? 's' : ''} ${names}`;
  return accepted.length ? `${what}: this route accepts ${accepted.join(', ')}` : `${what}: this route takes no query parameters`;
}

/** " (did you mean 'timeframe'?)" for a name that is an accepted one in another case or with a typo or two. */
function hint(name: string, accepted: readonly string[]): string {
  const best = nearestName(name, accepted, 2);
  return best === undefined ? '' : ` (did you mean '${best}'?)`;
}
