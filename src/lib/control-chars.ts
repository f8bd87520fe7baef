// Text someone else chose (a key's label, a payer's address or identifier, a query, an error a facilitator
// echoed from a payload) is stored and printed with its control characters escaped: in an operator's terminal a
// control character acts — an escape sequence moves the cursor or rewrites lines, a newline or a carriage return
// forges a row of `keys list` or `payments list`, a bidirectional control reorders what follows it — and in a
// log file it forges a line. Each is written as a visible escape instead: the C0 controls, DEL and the C1
// controls (U+0080–U+009F, which some terminals obey as escape sequences) as \xNN; the Unicode line and paragraph
// separators and the bidirectional controls as \uNNNN.
//
// A backslash is left as it is, so escaping is idempotent: the ledger stores payer-supplied text escaped, and the
// CLIs escape what they print again (rows written before the ledger escaped are made safe too) without doubling
// anything. A literal "\x0a" typed by a payer then reads like an escaped newline: harmless, since neither acts.

const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every control character written as a `\xNN` (or `\uNNNN`) escape. */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** escapeControl for a value that may be absent. */
export function escapeControlOrNull(text: string | null | undefined): string | null {
  return text == null ? null : escapeControl(text);
}

/** Unicode controls JSON.stringify leaves as they are (it escapes U+0000–U+001F itself). */
const JSON_UNESCAPED = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** JSON.stringify(value, null, 2) with DEL, the C1 controls and the bidirectional controls written as \uNNNN: the same JSON, safe in a terminal. */
export function controlFreeJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(JSON_UNESCAPED, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
