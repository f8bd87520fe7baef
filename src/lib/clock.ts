// The current time as ISO-8601, made once per millisecond: every answer carries its time
// (meta.timestamp) and formatting a Date costs more than the rest of a cached answer's envelope;
// under load many answers share a millisecond.
let lastMs = -1;
let lastIso = '';

export function isoNow(ms: number = Date.now()): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}
