// compose.yaml is the documented multi-instance setup (docs/operating/several-instances.md). Docker
// cannot run here, so the file is read as Compose would read it: the services, ports, variables and volumes
// the page documents are there, every variable given to marketgate is one it knows and accepts, and the
// page names what the file holds.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ENV_SPEC, loadConfig } from '../src/config.ts';

interface Service {
  image?: string;
  build?: string;
  command?: string | string[];
  ports?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  depends_on?: Record<string, { condition: string }> | string[];
  healthcheck?: { test: string[] };
}

const compose = parse(readFileSync('compose.yaml', 'utf8'), { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const page = readFileSync('docs/operating/several-instances.md', 'utf8');
const instances = Object.entries(compose.services).filter(([, s]) => s.build === '.');

/** A `${NAME:-default}` / `${NAME:?message}` reference as Compose fills it in when NAME is unset. */
const interpolated = (value: string) => value.replace(/\$\{(\w+)(?::-([^}]*)|:\?[^}]*)?\}/g, (_m, name: string, fallback?: string) => fallback ?? `https://${name.toLowerCase()}.example`);

describe('compose.yaml', () => {
  it('runs two marketgate instances from this image behind one load balancer, with PostgreSQL and Redis', () => {
    expect(instances.map(([name]) => name)).toEqual(['marketgate-1', 'marketgate-2']);
    expect(Object.keys(compose.services).sort()).toEqual(['lb', 'marketgate-1', 'marketgate-2', 'postgres', 'redis']);
    expect(compose.services.lb!.ports).toEqual(['8080:8080']);
    const command = String(compose.services.lb!.command);
    for (const [name] of instances) expect(command).toContain(`--to ${name}:3000`);
    // The instances start once the database and Redis answer their health checks.
    for (const [, s] of instances) expect(s.depends_on).toEqual({ postgres: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } });
    expect(compose.services.postgres!.healthcheck?.test).toContain('pg_isready');
  });

  it('gives each instance the shared database and Redis, the public URL, and the client IP through the one proxy', () => {
    for (const [name, s] of instances) {
      const env = s.environment!;
      expect(env.DATABASE_URL, name).toMatch(/^postgres:\/\/marketgate:.*@postgres:5432\/marketgate$/);
      expect(env.REDIS_URL, name).toBe('redis://redis:6379');
      expect(env.TRUST_PROXY, name).toBe('uniquelocal');
      expect(env.HOST, name).toBe('0.0.0.0');
      // Required: without it the agent card and every 402 would advertise an address clients cannot reach.
      expect(env.PUBLIC_BASE_URL, name).toMatch(/^\$\{PUBLIC_BASE_URL:\?/);
    }
  });

  it('gives marketgate only variables it knows, with values it accepts', () => {
    for (const [name, s] of instances) {
      const env = Object.fromEntries(Object.entries(s.environment!).map(([k, v]) => [k, interpolated(String(v))]));
      for (const variable of Object.keys(env)) expect(Object.keys(ENV_SPEC), `${name}: ${variable}`).toContain(variable);
      const config = loadConfig(env);
      expect(config.db.url).toBeDefined();
      expect(config.redis.url).toBe('redis://redis:6379');
    }
  });

  it('keeps the ledger on a volume and runs Redis without persistence (it holds nothing durable)', () => {
    expect(Object.keys(compose.volumes)).toEqual(['ledger']);
    expect(compose.services.postgres!.volumes).toEqual(['ledger:/var/lib/postgresql/data']);
    expect(String(compose.services.redis!.command)).toMatch(/--save ""/);
    expect(String(compose.services.redis!.command)).toMatch(/--appendonly no/);
  });

  it('is what docs/operating/several-instances.md documents', () => {
    expect(page).toMatch(/^# Running several instances\n/);
    const section = page.slice(page.indexOf('## compose.yaml'));
    expect(section.length).toBeGreaterThan(300);
    for (const word of ['compose.yaml', 'marketgate-1', 'marketgate-2', ':8080', 'TRUST_PROXY', 'PUBLIC_BASE_URL', 'ledger', 'persistence']) expect(section, word).toContain(word);
    for (const word of ['REDIS_URL', 'DATABASE_URL', 'no persistence']) expect(page, word).toContain(word);
  });
});
