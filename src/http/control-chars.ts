// Text a client chose (a query, an error a facilitator echoed from a payload) is stored and printed with its
// control characters escaped: a newline or an escape sequence in it must not forge a row in an operator's
// terminal or a line in a log file.

/** C0 controls, DEL, C1 controls, and the Unicode line and paragraph separators. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/** `text` with every control character written as a `\xNN` (or `\uNNNN`) escape; a backslash itself is left as it is. */
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
