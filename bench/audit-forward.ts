import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditForwarder } from '../electron/core/audit/forward/service.ts';
import { importFile } from '../electron/core/audit/import.ts';
import { AuditStore } from '../electron/core/audit/store.ts';
import { startSandbox } from '../electron/sandbox/index.ts';
import { SANDBOX_HEC_TOKEN } from '../electron/sandbox/siem.ts';
import { sinkSchema } from '../shared/audit-sinks.ts';
import { writeNdjson } from './audit-data.ts';

/**
 * Forwarding N cached audit events (issue #46) to the file sink and to the Sandbox's HEC stand-in
 * (indexer acknowledgement on): events/s and the forwarder's peak RSS. Each forward runs in a child
 * process, so neither the cache's making nor the stand-in counts in its memory. The cache is made
 * once by the import (`--dir DIR` keeps it; an `audit-import.ts --keep DIR` cache is reused).
 * Usage: node bench/audit-forward.ts [N] [--dir DIR] [--only file|hec]
 */
const args = process.argv.slice(2);

if (args[0] === '--child') {
  // The forward alone: node bench/audit-forward.ts --child DBPATH SINKJSON
  const [, dbPath, sinkJson] = args;
  const sink = sinkSchema.parse(JSON.parse(sinkJson));
  const store = new AuditStore(dbPath);
  const f = new AuditForwarder({
    db: store.db,
    settings: () => ({ auditSinks: [sink], forwardAfterAuditSync: false }),
    saveSinks: () => {},
    secrets: { get: async () => SANDBOX_HEC_TOKEN, set: async () => {}, clear: async () => {} },
  });
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const [r] = await f.forward();
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  store.close();
  console.log(
    JSON.stringify({ ...r, wall, cpu: (cpu.user + cpu.system) / 1e6, maxRssMb: process.resourceUsage().maxRSS / 1024 }),
  );
  process.exit(0);
}

if (args[0] === '--write') {
  await writeNdjson(args[1], Number(args[2]), 'newest-first', 0);
  process.exit(0);
}

const count = Number(args.find((a) => /^\d+$/.test(a)) ?? 1_000_000);
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : null;
const dir = args.includes('--dir') ? args[args.indexOf('--dir') + 1] : mkdtempSync(join(tmpdir(), 'md-forward-bench-'));
mkdirSync(dir, { recursive: true });
const dbPath = join(dir, 'audit.db');

if (!existsSync(dbPath)) {
  const file = join(dir, `events-${count}.ndjson`);
  const w = spawnSync(process.execPath, [import.meta.filename, '--write', file, String(count)], { stdio: 'inherit' });
  if (w.status !== 0) throw new Error('writing the events failed');
  const store = new AuditStore(dbPath);
  const t0 = Date.now();
  const r = await importFile(store, file);
  console.log(`cache made: ${r.accepted} events in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  store.close();
  rmSync(file, { force: true });
}
// Every run starts from nothing delivered.
{
  const store = new AuditStore(dbPath);
  store.db.exec('DELETE FROM forward_sinks; DELETE FROM forward_behind; DELETE FROM forward_dead;');
  console.log(`cache: ${store.counts().events} events`);
  store.close();
}

const runChild = (sink: unknown) =>
  new Promise<Record<string, number | string>>((resolve, reject) => {
    const child = spawn(process.execPath, [import.meta.filename, '--child', dbPath, JSON.stringify(sink)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!)) : reject(new Error(`child ${code}`)),
    );
  });

const show = (name: string, r: Record<string, number | string>) =>
  console.log(
    `${name}: ${r.delivered} events in ${Number(r.wall).toFixed(1)} s = ${Math.round(Number(r.delivered) / Number(r.wall))} events/s, ` +
      `${Number(r.cpu).toFixed(1)} CPU-s, ${r.requests} requests, peak RSS ${Math.round(Number(r.maxRssMb))} MB (${r.outcome})`,
  );

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
if (only !== 'hec') {
  const folder = join(dir, 'forwarded');
  rmSync(folder, { recursive: true, force: true });
  show('file sink', await runChild({ kind: 'file', id: 'bench-files', folder }));
  rmSync(folder, { recursive: true, force: true });
}
if (only !== 'file') {
  const sandbox = await startSandbox();
  try {
    show('HEC stand-in', await runChild({ kind: 'splunk-hec', id: 'bench-hec', url: sandbox.url }));
  } finally {
    await sandbox.close();
  }
}
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
if (!args.includes('--dir')) rmSync(dir, { recursive: true, force: true });
