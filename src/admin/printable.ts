// Text the operator CLIs print that someone else wrote (a key's label, a payer's identifier or
// address, a facilitator's error reason) goes to the operator's terminal, where a control character
// acts: an escape sequence can move the cursor, rewrite or hide lines, a newline or a carriage return
// can forge a row of `keys list` or `payments list`. Each such character is shown as a visible escape
// instead, so a row is always one line and reads as what is stored:
//   \n \r \t as themselves; other C0 controls, DEL and the C1 controls (U+0080–U+009F, which some
//   terminals obey as escape sequences) as \xHH; the Unicode line and paragraph separators and the
//   bidirectional controls (which reorder what follows them) as \u{HHHH}; a backslash as \\, so an
//   escape shown is never mistaken for one written.
// JSON output (`--json`) needs no more than JSON.stringify gives for C0 controls, plus the same \u
// escapes for the others (see printableJson).

const UNPRINTABLE = /[\\\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `text` with every control character shown as a visible escape (see above). */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => {
    const named = NAMED[c];
    if (named) return named;
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

/** Unicode controls JSON.stringify leaves as they are (it escapes U+0000–U+001F itself). */
const JSON_UNESCAPED = /[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** JSON.stringify(value, null, 2), with DEL, the C1 controls and the bidirectional controls written as \uHHHH (still the same JSON). */
export function printableJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(JSON_UNESCAPED, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
