// The OpenAPI document passes a strict linter: `redocly lint` with redocly.yaml (recommended-strict:
// every warning is an error), over the committed document (x402 off) and the one served with x402 on.
// The linter runs offline: its telemetry and update check are off, and it reads nothing but the files.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from '../fakes/fake-upstream.ts';
import { makeApp, type TestApp } from '../helpers.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
}

/** `redocly lint` of one file, offline, with the repository's redocly.yaml. */
async function lint(file: string): Promise<LintReport> {
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
  const args = [CLI, 'lint', '--config', join(ROOT, 'redocly.yaml'), '--format', 'json', file];
  // Exit status 1 means problems were found: the report is on stdout all the same.
  const stdout = await promisify(execFile)(process.execPath, args, { cwd: ROOT, env, timeout: 60_000 }).then(
    (r) => r.stdout,
    (err: { stdout?: string }) => err.stdout ?? '',
  );
  return JSON.parse(stdout) as LintReport;
}

const fake = new FakeUpstream();
let t: TestApp;
let dir: string;
beforeAll(async () => {
  await fake.start();
  fake.route('GET /facilitator/supported', { body: { kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }], extensions: [], signers: {} } });
  t = await makeApp({ X402_NETWORK: 'base', X402_PAY_TO: '0x1111111111111111111111111111111111111111', X402_FACILITATOR: `${fake.url}/facilitator` });
  // Linted as served once the facilitator has answered: with each paid operation's x402 terms in x-payment-info.
  await t.app.reference.termsPublished();
  dir = mkdtempSync(join(tmpdir(), 'marketgate-lint-'));
});
afterAll(async () => {
  await t.app.close();
  await fake.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('redocly lint', () => {
  it('passes with no error and no warning: the committed document and the one served with x402 on; and catches a defect', { timeout: 90_000 }, async () => {
    const served = (await t.app.inject({ url: '/openapi.json' })).json();
    expect(served.paths['/v1/price'].get['x-payment-info'].protocols[0].x402.accepts).toHaveLength(1);
    writeFileSync(join(dir, 'served.json'), JSON.stringify(served));
    // The defects the linter found before (no licence, an operation without operationId, `nullable` without `type`) are still caught.
    const broken = structuredClone(served);
    delete broken.info.license;
    delete broken.paths['/v1/price'].get.operationId;
    broken.components.schemas.SourceMeta.properties.age_s = { nullable: true, anyOf: [{ type: 'number' }, { type: 'string' }] };
    writeFileSync(join(dir, 'broken.json'), JSON.stringify(broken));

    const [committed, live, defective] = await Promise.all([lint(join(ROOT, 'openapi/openapi.json')), lint(join(dir, 'served.json')), lint(join(dir, 'broken.json'))]);
    expect(committed.problems).toEqual([]);
    expect(committed.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
    expect(live.problems).toEqual([]);
    expect(live.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
    // (The broken age_s also refuses the null age of the example answers that carry one: those are examples made invalid, not more defects.)
    const rules = defective.problems.map((p) => p.ruleId).filter((r) => r !== 'no-invalid-media-type-examples');
    expect(rules.sort()).toEqual(['info-license', 'nullable-type-sibling', 'operation-operationId']);
  });
});
