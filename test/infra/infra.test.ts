/**
 * Static checks of infra/ (no container runtime or cluster here: Docker Hub is unreachable and the docker CLI
 * has no compose plugin, so images are not built in CI). Kubernetes: every Deployment has the readiness
 * (`/readyz`) and liveness (`/healthz`) probes on its container port, resources, a non-root security context,
 * an image named after the service with the package version, and a Service selecting it; the migration Job
 * runs both `dist/migrate.js`; every ConfigMap/Secret key is a variable the code reads. Compose: every build
 * names an existing Dockerfile, dependencies exist, the services reach PostgreSQL and the simulators by
 * their compose names. Dockerfiles: multi-stage, non-root, HEALTHCHECK, and every path they run is produced
 * by `pnpm build` from an existing source.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { load, loadAll } from 'js-yaml';

const ROOT = path.join(__dirname, '../..');
const INFRA = path.join(ROOT, 'infra');
type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const k8sDocs: Obj[] = readdirSync(path.join(INFRA, 'k8s'))
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) => (loadAll(readFileSync(path.join(INFRA, 'k8s', f), 'utf8')) as Obj[]).filter(Boolean).map((d) => ({ ...d, __file: f })));
const ofKind = (kind: string) => k8sDocs.filter((d) => d.kind === kind);
const version = (svc: string) => (JSON.parse(readFileSync(path.join(ROOT, 'services', svc, 'package.json'), 'utf8')) as { version: string }).version;

/** `services/x/dist/a.js` (a command's entry) → does `services/x/src/a.ts` exist (what `pnpm build` compiles)? */
function builtFromSource(distPath: string): boolean {
  return existsSync(path.join(ROOT, distPath.replace('/dist/', '/src/').replace(/\.js$/, '.ts')));
}

/** Every environment variable name the code and README document. */
const knownEnv = (() => {
  const names = new Set<string>();
  const scan = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory() && e.name !== 'node_modules' && e.name !== 'dist' && e.name !== 'generated') scan(p);
      else if (e.name.endsWith('.ts')) for (const m of readFileSync(p, 'utf8').matchAll(/(?:'|env\.)([A-Z][A-Z0-9_]+)\b/g)) names.add(m[1]);
    }
  };
  ['services/ordering/src', 'services/timing/src', 'packages/shared/src'].forEach((d) => scan(path.join(ROOT, d)));
  return names;
})();

describe('kubernetes manifests', () => {
  const deployments = ofKind('Deployment');

  test('both services are deployed', () => {
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(['ordering', 'timing']);
  });

  test.each(['timing', 'ordering'])('%s: probes on /readyz and /healthz, resources, non-root, image and Service', (name) => {
    const d = deployments.find((x) => x.metadata.name === name)!;
    const pod = d.spec.template.spec;
    expect(d.spec.selector.matchLabels).toEqual(
      expect.objectContaining(d.spec.template.metadata.labels['app.kubernetes.io/name'] ? { 'app.kubernetes.io/name': name } : {}),
    );
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.containers).toHaveLength(1);
    const c = pod.containers[0];
    expect(c.image).toBe(`registry.example.com/sports-timing/${name}:${version(name)}`);
    const port = c.ports.find((p: Obj) => p.name === 'http');
    const config = ofKind('ConfigMap')[0].data;
    expect(String(port.containerPort)).toBe(config[`${name.toUpperCase()}_PORT`]);
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.resources.requests.cpu).toBeDefined();
    expect(c.resources.requests.memory).toBeDefined();
    expect(c.resources.limits.memory).toBeDefined();
    expect(c.securityContext.allowPrivilegeEscalation).toBe(false);
    expect(c.command.slice(0, 2)).toEqual(['node', '--conditions=dist']);
    expect(builtFromSource(c.command[c.command.length - 1])).toBe(true);
    expect(c.envFrom.map((e: Obj) => e.configMapRef?.name ?? e.secretRef?.name).sort()).toEqual(['sports-timing-config', 'sports-timing-secrets']);
    // The drain of a stop (30 s at most in the services) fits the grace period.
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(30);
    const svc = ofKind('Service').find((s) => s.metadata.name === name)!;
    expect(svc.spec.selector).toEqual({ 'app.kubernetes.io/name': name });
    expect(svc.spec.ports[0].targetPort).toBe('http');
  });

  test('the migration Job runs dist/migrate.js of both services with the database secret', () => {
    const [job] = ofKind('Job');
    const pod = job.spec.template.spec;
    const containers = [...(pod.initContainers ?? []), ...pod.containers];
    expect(pod.restartPolicy).toBe('Never');
    for (const svc of ['timing', 'ordering']) {
      const c = containers.find((x: Obj) => x.image === `registry.example.com/sports-timing/${svc}:${version(svc)}`);
      expect(c.command).toEqual(['node', '--conditions=dist', '--enable-source-maps', `services/${svc}/dist/migrate.js`]);
      expect(builtFromSource(c.command[3])).toBe(true);
      expect(c.envFrom).toEqual([{ secretRef: { name: 'sports-timing-secrets' } }]);
    }
  });

  test('every ConfigMap and Secret key is a variable the services read', () => {
    const keys = [...Object.keys(ofKind('ConfigMap')[0].data), ...Object.keys(ofKind('Secret')[0].stringData)];
    expect(keys.filter((k) => !knownEnv.has(k))).toEqual([]);
    expect(ofKind('Secret')[0].__file).toBe('secret.example.yaml');
  });

  test('kustomization lists existing files, one namespace everywhere, and no secret', () => {
    const k = load(readFileSync(path.join(INFRA, 'k8s/kustomization.yaml'), 'utf8')) as Obj;
    for (const r of k.resources as string[]) expect(existsSync(path.join(INFRA, 'k8s', r))).toBe(true);
    expect(k.resources).not.toContain('secret.example.yaml');
    for (const d of k8sDocs.filter((x) => x.kind !== 'Namespace' && x.kind !== 'Kustomization')) expect(d.metadata.namespace).toBe('sports-timing');
  });
});

describe('compose.yaml', () => {
  const compose = load(readFileSync(path.join(INFRA, 'compose.yaml'), 'utf8')) as Obj;
  const services = compose.services as Record<string, Obj>;

  test('PostgreSQL, both simulators and both services', () => {
    expect(Object.keys(services)).toEqual(expect.arrayContaining(['postgres', 'erp-sim', 'payment-sim', 'timing', 'ordering']));
  });

  test('builds name existing Dockerfiles; dependencies exist; mounted files exist', () => {
    for (const [name, s] of Object.entries(services)) {
      if (s.build) expect(existsSync(path.join(INFRA, s.build.context, s.build.dockerfile))).toBe(true);
      for (const dep of Object.keys(s.depends_on ?? {})) expect(Object.keys(services)).toContain(dep);
      for (const v of (s.volumes ?? []) as string[]) if (v.startsWith('./')) expect(existsSync(path.join(INFRA, v.split(':')[0]))).toBe(true);
      if (s.command && s.command[0] === 'node') expect(builtFromSource(s.command[s.command.length - 1])).toBe(true);
      expect(name).toMatch(/^[a-z-]+$/);
    }
  });

  test('env wiring: services reach PostgreSQL, the simulators and each other by compose names', () => {
    const pg = services.postgres.environment;
    for (const svc of ['timing', 'ordering']) {
      const url = new URL(services[svc].environment.DATABASE_URL);
      expect(url.hostname).toBe('postgres');
      expect(url.username).toBe(pg.POSTGRES_USER);
      expect(decodeURIComponent(url.password)).toBe(pg.POSTGRES_PASSWORD);
      expect(url.pathname).toBe(`/${pg.POSTGRES_DB}`);
      expect(services[svc].depends_on.postgres.condition).toBe('service_healthy');
      expect(services[svc].image).toBe(`sports-timing/${svc}:${version(svc)}`);
    }
    const o = services.ordering.environment;
    expect(new URL(o.ERP_BASE_URL_WECLAPP).host).toBe(`erp-sim:${services['erp-sim'].environment.ERP_SIMULATOR_PORT}`);
    expect(new URL(o.PAYMENT_BASE_URL).host).toBe(`payment-sim:${services['payment-sim'].environment.PAYMENT_SIMULATOR_PORT}`);
    expect(new URL(services['payment-sim'].environment.PAYMENT_SIMULATOR_WEBHOOK_URLS).host).toBe(`ordering:${o.ORDERING_PORT}`);
    expect(new URL(o.REDIS_URL).hostname).toBe('redis');
  });
});

describe('Dockerfiles', () => {
  const dir = path.join(INFRA, 'docker');
  test.each(readdirSync(dir).filter((f) => f.endsWith('.Dockerfile')))('%s: multi-stage, node:20-slim, non-root, paths exist', (file) => {
    const text = readFileSync(path.join(dir, file), 'utf8');
    expect((text.match(/^FROM /gm) ?? []).length).toBeGreaterThanOrEqual(3);
    expect(text).toMatch(/^ARG NODE_IMAGE=node:20-slim$/m);
    expect(text).toMatch(/^USER node$/m);
    expect(text).toMatch(/pnpm install --frozen-lockfile --prod/);
    for (const m of text.matchAll(/^COPY (?!--from)(?:--\S+ )*(\S+(?: \S+)*) \S+$/gm)) {
      for (const src of m[1].split(' ').filter((s) => s !== '.')) expect(existsSync(path.join(ROOT, src))).toBe(true);
    }
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(text)![1]) as string[];
    expect(cmd.slice(0, 2)).toEqual(['node', '--conditions=dist']);
    expect(builtFromSource(cmd[cmd.length - 1])).toBe(true);
    if (file !== 'simulators.Dockerfile') expect(text).toMatch(/^HEALTHCHECK .*\n\s+CMD .*\/healthz/m);
  });

  test('.dockerignore keeps node_modules, dist and .data out of the build context', () => {
    const ignore = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8');
    for (const p of ['**/node_modules', '**/dist', '.data']) expect(ignore.split('\n')).toContain(p);
  });
});

describe('prometheus alert rules', () => {
  const rules = (load(readFileSync(path.join(INFRA, 'prometheus', 'alerts.yaml'), 'utf8')) as Obj).groups.flatMap((g: Obj) => g.rules) as Obj[];
  const metricsSource = ['services/ordering/src/metrics/outbox-backlog.ts', 'services/timing/src/metrics.ts']
    .map((f) => readFileSync(path.join(ROOT, f), 'utf8'))
    .join('\n');
  const exported = new Set([...metricsSource.matchAll(/gauge\(\s*'([a-z_]+)'/g)].map((m) => m[1]));

  test('the queue metrics are alerted on: oldest job age and dead jobs', () => {
    const used = new Set(rules.flatMap((r) => [...String(r.expr).matchAll(/\b([a-z_]+)\{/g)].map((m) => m[1])));
    expect([...used].sort()).toEqual(expect.arrayContaining(['outbox_dead_messages', 'outbox_oldest_pending_age_seconds']));
    // Every metric a rule reads is one a service exports (a renamed gauge would silence an alert).
    expect([...used].filter((m) => !exported.has(m))).toEqual([]);
  });

  test.each(rules.map((r) => [r.alert as string, r] as const))('%s has an expression, a severity and points to the runbook', (_name, r) => {
    expect(typeof r.expr).toBe('string');
    expect(['page', 'ticket']).toContain(r.labels.severity);
    expect(r.annotations.summary).toBeTruthy();
    expect(r.annotations.description).toMatch(/docs\/(outbox|decisions)\.md/);
    // Job kinds named in a rule exist in the code (the order flow's job kinds are named in one place).
    for (const m of String(r.expr).matchAll(/kind="([^"]+)"/g))
      expect(readFileSync(path.join(ROOT, 'services/ordering/src/orders/flow/flow-jobs.ts'), 'utf8')).toContain(`'${m[1]}'`);
  });

  test('the runbook a rule points to exists and covers that alert', () => {
    for (const r of rules) {
      const doc = /docs\/[a-z-]+\.md/.exec(String(r.annotations.description))![0];
      expect(readFileSync(path.join(ROOT, doc), 'utf8')).toContain(r.alert);
    }
  });
});
