// A document made once as bytes and served as they are: the same Buffer is written for every request (a
// response queued behind others holds a reference to it, not a copy), with a strong ETag, 304 to a matching
// If-None-Match, and gzip or brotli by Accept-Encoding (Vary: Accept-Encoding), each compressed once.
//
// Why not @fastify/compress: it compresses each answer as it is sent (a compression stream and its CPU per
// request), and its precompressed files are @fastify/static's, read from disk. These documents are made in
// memory at start-up and change rarely (/openapi.json when its x402 terms do: rebuild), so their compressed forms
// are made once per change too, and the choice among three buffers is made here (the Accept-Encoding parsing is
// Fastify's own @fastify/accept-negotiator).
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { negotiate } from '@fastify/accept-negotiator';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** One encoding of the document. */
export interface Representation {
  body: Buffer;
  /** Strong, and its own per encoding (a gzip body is other bytes than the plain one). */
  etag: string;
  encoding: 'br' | 'gzip' | undefined;
}

const ENCODINGS = ['br', 'gzip'] as const;
/** Brotli first: the smaller, when a client takes both at the same weight. */
const ENCODING_LIST: ('br' | 'gzip')[] = [...ENCODINGS];
const compress = {
  br: promisify(brotliCompress),
  gzip: promisify(gzip),
};

/** Brotli's quality for the reference documents (see build()). */
const BROTLI_QUALITY = 9;

/** The document's bytes, and their compressed forms as they are made. */
interface Built {
  identity: Representation;
  encoded: Partial<Record<'br' | 'gzip', Representation>>;
  /** Resolves once the compressed forms are made (or given up). */
  compressed: Promise<void>;
}

export class PrebuiltDocument {
  private built: Built | undefined;
  /** The latest rebuild(), until it has replaced `built`. */
  private next: Promise<void> | undefined;

  /** `onServe`: called as the document is served (the OpenAPI document asks for the x402 terms it lacks). */
  constructor(
    readonly contentType: string,
    private make: () => string | Buffer,
    private readonly onServe?: () => void,
  ) {}

  /**
   * Makes the bytes (once), then their gzip and brotli forms in the background (zlib runs them on libuv's
   * thread pool, off the event loop); until those are ready, the plain bytes are served. Resolves once they are.
   */
  build(): Promise<void> {
    this.built ??= made(this.make());
    return this.built.compressed;
  }

  /**
   * Makes the document again with `make` (its content changed: the x402 terms of /openapi.json), its compressed
   * forms too, and only then serves it instead of the one before: a reader gets either whole, each with its own
   * ETag. Rare (when the payment offers change), never on a request's path. Resolves once it is served. A
   * document not made yet is only given the new `make`, for its first request.
   */
  rebuild(make: () => string | Buffer): Promise<void> {
    this.make = make;
    if (this.built === undefined && this.next === undefined) return Promise.resolve();
    const next = made(make());
    const swap = next.compressed.then(() => {
      // A later rebuild wins, whichever finishes compressing first.
      if (this.next === swap) (this.built = next), (this.next = undefined);
    });
    this.next = swap;
    return swap;
  }

  /** The representation `acceptEncoding` prefers among those made (brotli, then gzip, then the plain bytes). */
  representation(acceptEncoding: string | undefined): Representation {
    if (this.built === undefined) void this.build();
    const built = this.built!;
    const chosen = acceptEncoding === undefined ? null : negotiate(acceptEncoding, ENCODING_LIST);
    return (chosen !== null && built.encoded[chosen]) || built.identity;
  }

  /** Answers `req` with the document: 304 when its If-None-Match names the chosen representation. */
  send(req: FastifyRequest, reply: FastifyReply): FastifyReply {
    this.onServe?.();
    const rep = this.representation(req.headers['accept-encoding']);
    reply.header('vary', 'accept-encoding').header('etag', rep.etag);
    if (noneMatch(req.headers['if-none-match'], rep.etag)) return reply.code(304).send();
    if (rep.encoding !== undefined) reply.header('content-encoding', rep.encoding);
    return reply.type(this.contentType).send(rep.body);
  }
}

/** A document's bytes, with its compressed forms started. */
function made(content: string | Buffer): Built {
  const body = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 27);
  const encoded: Built['encoded'] = {};
  const compressed = Promise.all(
    ENCODINGS.map(async (encoding) => {
      // Brotli at quality 9, not 11: on the 639 KB /openapi.json, 11 took 674 ms for 43.1 KB and 9 takes 34 ms for
      // 48.8 KB; these forms are made before the port opens, and 11 had start-up (spawn → /health) at 1.5 s.
      const params = encoding === 'br' ? { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } } : { level: 9 };
      try {
        const compressed = await compress[encoding](body, params);
        // Served compressed only where that saves bytes.
        if (compressed.length < body.length) encoded[encoding] = { body: compressed, etag: `"${hash}-${encoding}"`, encoding };
      } catch {
        // Not compressed: the plain bytes are served (zlib fails only when out of memory).
      }
    }),
  ).then(() => undefined);
  return { identity: { body, etag: `"${hash}"`, encoding: undefined }, encoded, compressed };
}

/** Whether If-None-Match `header` names `etag` (weak comparison, RFC 9110 §13.1.2: W/ ignored; `*` matches any). */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  for (const part of header.split(',')) {
    const tag = part.trim();
    if ((tag.startsWith('W/') ? tag.slice(2) : tag) === etag) return true;
  }
  return false;
}
