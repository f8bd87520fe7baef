// A document made once as bytes and served as they are: the same Buffer is written for every request (a
// response queued behind others holds a reference to it, not a copy), with a strong ETag, 304 to a matching
// If-None-Match, and gzip or brotli by Accept-Encoding (Vary: Accept-Encoding), each compressed once.
//
// Why not @fastify/compress: it compresses each answer as it is sent (a compression stream and its CPU per
// request), and its precompressed files are @fastify/static's, read from disk. These documents are made in
// memory at start-up and never change, so their compressed forms are made once too, and the choice among
// three buffers is made here (the Accept-Encoding parsing is Fastify's own @fastify/accept-negotiator).
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

export class PrebuiltDocument {
  private identity: Representation | undefined;
  private readonly encoded: Partial<Record<'br' | 'gzip', Representation>> = {};
  private compressing: Promise<void> | undefined;

  constructor(
    readonly contentType: string,
    private readonly make: () => string | Buffer,
  ) {}

  /**
   * Makes the bytes (once), then their gzip and brotli forms in the background (zlib runs them on libuv's
   * thread pool, off the event loop); until those are ready, the plain bytes are served. Resolves once they are.
   */
  build(): Promise<void> {
    if (this.identity === undefined) {
      const made = this.make();
      const body = typeof made === 'string' ? Buffer.from(made, 'utf8') : made;
      const hash = createHash('sha256').update(body).digest('base64url').slice(0, 27);
      this.identity = { body, etag: `"${hash}"`, encoding: undefined };
      this.compressing = Promise.all(
        ENCODINGS.map(async (encoding) => {
          // Brotli at quality 9, not 11: on the 639 KB /openapi.json, 11 took 674 ms for 43.1 KB and 9 takes 34 ms for
          // 48.8 KB; these forms are made before the port opens, and 11 had start-up (spawn → /health) at 1.5 s.
          const params = encoding === 'br' ? { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } } : { level: 9 };
          try {
            const compressed = await compress[encoding](body, params);
            // Served compressed only where that saves bytes.
            if (compressed.length < body.length) this.encoded[encoding] = { body: compressed, etag: `"${hash}-${encoding}"`, encoding };
          } catch {
            // Not compressed: the plain bytes are served (zlib fails only when out of memory).
          }
        }),
      ).then(() => undefined);
    }
    return this.compressing!;
  }

  /** The representation `acceptEncoding` prefers among those made (brotli, then gzip, then the plain bytes). */
  representation(acceptEncoding: string | undefined): Representation {
    if (this.identity === undefined) void this.build();
    const chosen = acceptEncoding === undefined ? null : negotiate(acceptEncoding, ENCODING_LIST);
    return (chosen !== null && this.encoded[chosen]) || this.identity!;
  }

  /** Answers `req` with the document: 304 when its If-None-Match names the chosen representation. */
  send(req: FastifyRequest, reply: FastifyReply): FastifyReply {
    const rep = this.representation(req.headers['accept-encoding']);
    reply.header('vary', 'accept-encoding').header('etag', rep.etag);
    if (noneMatch(req.headers['if-none-match'], rep.etag)) return reply.code(304).send();
    if (rep.encoding !== undefined) reply.header('content-encoding', rep.encoding);
    return reply.type(this.contentType).send(rep.body);
  }
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
