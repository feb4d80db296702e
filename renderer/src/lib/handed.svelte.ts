import { getTool, withDefaults } from '../../../shared/catalogue/index.ts';
import type { HandOff } from '../../../shared/contract/index.ts';
import { sameName } from '../../../shared/presets.ts';
import { call } from './bridge.ts';
import { presets } from './presets.svelte.ts';
import { queue } from './queue.svelte.ts';
import { studio } from './studio.svelte.ts';

const nameOf = (p: string) => p.split(/[\\/]/).filter(Boolean).pop() ?? p;

/** A link into the Queue or Audit: the event to open, and what the screen says when its id is not there. */
export const handed = $state({ queueNote: '', auditNote: '', auditEvent: '' });

/**
 * What the desktop app was handed from outside (`studio.handOff`: a second start, Open with, a
 * mediadesk:// link) put in the Studio: its files and folders as the inputs, the tool it names (else
 * the one last used), a preset's settings. Nothing starts: the person presses Start. Answers the
 * screen to show.
 */
export async function takeHandOff(h: HandOff): Promise<string> {
  if (h.screen === 'queue') {
    await queue.refresh();
    const known = queue.batches.has(h.batchId);
    if (known) queue.showNext(h.batchId);
    handed.queueNote = known
      ? ''
      : `The link names batch “${h.batchId}”, which is not in the queue. Nothing was changed.`;
    return 'queue';
  }
  if (h.screen === 'audit') {
    const found = await call('audit.event', { eventId: h.eventId }).catch(() => null);
    handed.auditEvent = found ? h.eventId : '';
    handed.auditNote = found
      ? ''
      : `The link names audit event “${h.eventId}”, which is not in the audit cache (Sync, or Import the file that holds it).`;
    return 'audit';
  }
  if (h.tool) studio.toolId = h.tool;
  if (h.inputs.length) studio.inputs = h.inputs.map((i) => ({ path: i.path, label: nameOf(i.path), files: [] }));
  const notes = h.refused.map((r) => `${r.path} ${r.reason}`);
  if (h.preset) {
    await presets.load();
    const p = presets.of(studio.toolId).find((x) => sameName(x.name, h.preset!));
    const tool = getTool(studio.toolId);
    if (p) studio.values[tool.id] = withDefaults(tool, structuredClone($state.snapshot(p.params)));
    else notes.push(`no preset “${h.preset}” for ${tool.title}`);
  }
  studio.handedNote = notes.length ? `Not taken: ${notes.join('; ')}.` : '';
  return 'studio';
}
