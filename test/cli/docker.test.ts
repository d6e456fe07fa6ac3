import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseCommandLine } from '../../src/cli/args.ts';
import { ConfigSchema } from '../../src/config/index.ts';
import { projectRoot } from '../../src/lib/paths.ts';

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  volumes?: string[];
  ports?: string[];
}

const compose = parse(readFileSync(path.join(projectRoot, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const { services } = compose;
const envNames = new Set(Object.keys(ConfigSchema.shape));

describe('docker-compose.yml', () => {
  it('default: postgres, a migration, the scheduled pipeline and the API', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'migrate', 'pipeline', 'postgres']);
  });

  it('behavior: every tally service runs a real command of the bin with known flags and env names', () => {
    for (const name of ['migrate', 'pipeline', 'api']) {
      const service = services[name]!;
      expect(service.build).toBe('.');
      const parsed = parseCommandLine(service.command ?? []);
      expect(parsed.command).toBeDefined();
      for (const key of Object.keys(service.environment ?? {})) expect(envNames.has(key), `${name}: ${key}`).toBe(true);
    }
    expect(parseCommandLine(services.pipeline!.command!)).toMatchObject({
      command: 'schedule',
      noServe: true,
      overrides: { SCHEDULE_EVERY: '15m' },
    });
    expect(parseCommandLine(services.api!.command!).command).toBe('serve');
    expect(parseCommandLine(services.migrate!.command!).command).toBe('migrate');
  });

  it('behavior: the API connects with the read-only role, the pipeline with the owner', () => {
    expect(new URL(services.api!.environment!.DATABASE_URL!.replace(/\$\{[^}]*\}/g, 'x')).username).toBe('tally_api');
    expect(new URL(services.pipeline!.environment!.DATABASE_URL!.replace(/\$\{[^}]*\}/g, 'x')).username).toBe('tally');
    expect(services.api!.environment!.HOST).toBe('0.0.0.0');
    expect(services.pipeline!.environment!.RPC_URL).toMatch(/^\$\{RPC_URL:\?/);
  });

  it('behavior: start order and healthchecks', () => {
    expect(services.postgres!.healthcheck!.test.join(' ')).toContain('pg_isready');
    expect(services.api!.healthcheck!.test.join(' ')).toContain('/api/v1/meta');
    expect(services.migrate!.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    for (const name of ['pipeline', 'api']) {
      expect(services[name]!.depends_on).toEqual({ migrate: { condition: 'service_completed_successfully' } });
    }
  });

  it('behavior: the init scripts mounted into postgres exist and grant SELECT only', () => {
    const mount = services.postgres!.volumes!.find((v) => v.includes('docker-entrypoint-initdb.d'))!;
    const dir = path.join(projectRoot, mount.split(':')[0]!);
    expect(existsSync(path.join(dir, '10-api-role.sh'))).toBe(true);
    const sqlText = readFileSync(path.join(dir, 'api-role.psql'), 'utf8').toLowerCase();
    const grants = [...sqlText.matchAll(/grant (\w+)/g)].map((m) => m[1]);
    expect(new Set(grants)).toEqual(new Set(['connect', 'usage', 'select']));
  });

  it('behavior: the Dockerfile builds on node:20 from the lock file and runs the bin', () => {
    const dockerfile = readFileSync(path.join(projectRoot, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^FROM node:20/m);
    expect(dockerfile).toMatch(/^RUN npm (ci|install) --omit=dev/m);
    expect(dockerfile).toMatch(/^COPY package.json package-lock.json/m);
    expect(dockerfile).toMatch(/ENTRYPOINT \["node", "bin\/x402-tally.js"\]/);
  });
});
