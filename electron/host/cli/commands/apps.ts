import { SETTLED_STATES } from '../../../core/queue/states.ts';
import { UsageError, type CliCommand } from '../command.ts';
import { openCliServices } from '../services.ts';
import { invoke, parseOptions, table } from './team-common.ts';

const USAGE = [
  'mediadesk apps list',
  '       mediadesk apps show ID',
  '       mediadesk apps run ID --input id=value [--input id=value ...] [--out DIR] [--yes]',
  '         (a creation input takes an image file, an image URL or a creation id; --yes accepts the cost)',
].join('\n');

export const appsCommand: CliCommand = {
  name: 'apps',
  summary: 'Workflow apps (Enterprise): list, show inputs and cost, run to downloaded results.',
  usage: USAGE,
  async run(ctx) {
    const [sub, ...rest] = ctx.argv;
    if (!sub || !['list', 'show', 'run'].includes(sub)) throw new UsageError(sub ? `unknown apps command "${sub}" (list, show, run)` : 'say list, show ID or run ID');
    const o = parseOptions(rest, ['--input', '-i', '--out'], ['--yes', '--json']);
    if (sub === 'list' && o.positional.length) throw new UsageError('apps list takes no arguments');
    if (sub !== 'list' && o.positional.length !== 1) throw new UsageError(`apps ${sub} takes one app id`);
    const inputs: Record<string, string> = {};
    for (const pair of [...(o.values.get('--input') ?? []), ...(o.values.get('-i') ?? [])]) {
      const eq = pair.indexOf('=');
      if (eq < 1) throw new UsageError(`--input takes id=value, got "${pair}"`);
      inputs[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
    const s = await openCliServices(ctx);
    try {
      if (sub === 'list') {
        const { apps } = await invoke(s.core, 'apps.list', {});
        if (o.flags.has('--json')) ctx.stdout.write(`${JSON.stringify(apps, null, 2)}\n`);
        else ctx.stdout.write(table(['ID', 'OUTPUT', 'COST', 'NAME'], apps.map((a) => [a.id, a.output ?? '', a.cost ?? '?', a.name])));
        return 0;
      }
      const def = await invoke(s.core, 'apps.get', { id: o.positional[0] });
      if (sub === 'show') {
        if (o.flags.has('--json')) ctx.stdout.write(`${JSON.stringify(def, null, 2)}\n`);
        else {
          ctx.stdout.write(`${def.name} (${def.id}): ${def.description}\ncost: ${def.cost ?? 'unknown'} credits per run; output: ${def.output ?? 'unknown'}\n`);
          ctx.stdout.write(table(['INPUT', 'TYPE', 'REQUIRED', 'ACCEPTS', 'LABEL'], def.inputs.map((i) => [i.id, i.type, i.required ? 'yes' : 'no',
            i.type === 'select' ? (i.options ?? []).join('|') : i.type === 'number' ? `${i.min ?? ''}..${i.max ?? ''}` : i.type === 'creation' ? 'file, URL or creation id' : i.maxLength ? `up to ${i.maxLength} chars` : 'text', i.label])));
        }
        return 0;
      }
      // The cost is shown and must be accepted: interactively, or with --yes in scripts.
      ctx.stderr.write(`${def.name} costs ${def.cost ?? 'an unknown number of'} credits per run.\n`);
      if (!o.flags.has('--yes')) {
        if (!ctx.stdin.isTTY) throw new UsageError('add --yes to accept the cost (no terminal to ask)');
        ctx.stderr.write('Run it? [y/N] ');
        const answer = await new Promise<string>((res) => ctx.stdin.once('data', (d) => res(String(d))));
        (ctx.stdin as NodeJS.ReadStream).pause?.();
        if (!/^y(es)?$/i.test(answer.trim())) {
          ctx.stderr.write('not run\n');
          return 1;
        }
      }
      const run = await invoke(s.core, 'apps.run', { appId: def.id, inputs, confirmedCost: def.cost, outDir: o.one('--out') });
      ctx.stdout.write(`run ${run.id.slice(0, 8)} queued\n`);
      // This process takes the queue (unless the desktop app holds it and runs it for us).
      s.core.engine.start();
      let last = '';
      for (;;) {
        const cur = (await invoke(s.core, 'apps.runs', { limit: 500 })).runs.find((r) => r.id === run.id)!;
        const line = `${cur.state}${cur.runStatus ? ` (${cur.runStatus})` : ''}`;
        if (line !== last) ctx.stderr.write(`${line}\n`);
        last = line;
        if (SETTLED_STATES.includes(cur.state)) {
          for (const f of cur.outputs) ctx.stdout.write(`${f}\n`);
          if (cur.error) ctx.stderr.write(`${cur.error}\n`);
          return cur.state === 'done' ? 0 : 1;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      await s.close();
    }
  },
};
