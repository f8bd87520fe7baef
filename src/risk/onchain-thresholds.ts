// Thresholds the chain's signals share (onchain-signals.ts, restriction-signals.ts): when a measured tax
// counts as a blocked sell, and when two taxes differ.

/** A sell tax measured at or above this many percent leaves a seller nothing: the sell did not go through in effect. */
export const SELL_BLOCKED_TAX_PCT = 99.5;

/** Two taxes (fractions) further apart than this disagree: one percentage point, above the pair's fee rounding. */
export const TAX_TOLERANCE = 0.01;
