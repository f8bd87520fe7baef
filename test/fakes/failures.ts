// The failures any provider can answer with, each with the exact error message the app must give
// for it. Meant for `it.each`; a provider's own failure cases go beside them in the same table.
import { recorded } from '../fixtures.ts';
import { PAST_DEADLINE_MS, TEST_DEADLINE_MS } from '../helpers.ts';
import type { FakeReply } from './fake-upstream.ts';

/** A failure, the message the app must give, and its status (502 unless the provider is limiting us: 503). */
export type FailureCase = [name: string, reply: FakeReply, message: string, status?: number];

export interface FailureOptions {
  /** A truncated body in the provider's own shape, served as application/json. */
  malformed: string;
  /** The body the timed-out reply would have carried (it arrives too late to be read); `{}` by default. */
  timeoutBody?: unknown;
  /** Start with Binance's recorded HTTP 451 "restricted location" answer (Binance spot and USD-M). */
  geoBlock?: boolean;
}

/**
 * `HTTP 500`, `a timeout` (an answer past the deadline of the test app) and `malformed JSON`,
 * answered by `source`; with `geoBlock`, `HTTP 451 (geo-block)` first.
 */
export function upstreamFailures(source: string, options: FailureOptions): FailureCase[] {
  const { malformed, timeoutBody = {}, geoBlock = false } = options;
  return [
    ...(geoBlock ? [binanceGeoBlock(source)] : []),
    ['HTTP 500', { status: 500, body: 'oops' }, `${source} answered HTTP 500`],
    ['a timeout', { delayMs: PAST_DEADLINE_MS, body: timeoutBody }, `${source} did not answer within ${TEST_DEADLINE_MS} ms`],
    ['malformed JSON', { body: malformed, headers: { 'content-type': 'application/json' } }, `${source} returned a body that is not valid JSON`],
  ];
}

function binanceGeoBlock(source: string): FailureCase {
  return ['HTTP 451 (geo-block)', { status: 451, body: recorded('binance__error_451_restricted_location.json') }, `${source} answered HTTP 451`];
}
