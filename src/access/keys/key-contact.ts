// OPERATOR_CONTACT: where a client asks this server's operator for an API key. Keys are free, and only the
// operator can make one (npm run keys), so every answer that asks for a key says how to ask for it: the
// 401s, /v1/status, the agent card, llms.txt and OpenAPI's 401 and ApiKeyAuth.
import { z } from 'zod';

const EMAIL = /^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/;

/** OPERATOR_CONTACT's value: an email address or an http(s) URL. */
export const contactSchema = z.string().refine((v) => {
  if (EMAIL.test(v)) return true;
  try {
    const url = new URL(v);
    return (url.protocol === 'http:' || url.protocol === 'https:') && !/\s/.test(v);
  } catch {
    return false;
  }
}, 'an email address (keys@example.com) or an http(s) URL (https://example.com/api-keys)');

/** One sentence on getting a key: from the contact when there is one, else from "this server's operator". */
export function howToGetKey(contact: string | undefined): string {
  return contact ? `API keys are free: ask the operator at ${contact}.` : "API keys are free: ask this server's operator for one.";
}
