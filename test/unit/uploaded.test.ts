import { describe, expect, it } from 'vitest';
import { named } from '../../electron/core/media/check.ts';
import { reportCsv } from '../../electron/core/queue/batch-report.ts';
import type { BatchReport } from '../../shared/contract/report.ts';
import { shownPath } from '../../shared/uploaded.ts';

const DROP = 'c0ffee00c0ffee00c0ffee00c0ffee00';
const copy = `/home/me/.config/MediaDesk/inbox/${DROP}/shoot/portrait.png`;

describe("a browser upload's copy is shown by the file's own name, never by the copy's folder", () => {
  it('shownPath: the path inside the drop for an upload, any other path as it is', () => {
    expect(shownPath(copy)).toBe('shoot/portrait.png');
    expect(shownPath(`C:\\Users\\me\\AppData\\Roaming\\MediaDesk\\inbox\\${DROP}\\clip.mp4`)).toBe('clip.mp4');
    expect(shownPath('/Users/me/inbox/shoot/portrait.png')).toBe('/Users/me/inbox/shoot/portrait.png');
  });

  it('in a reference error (a reference is named by the file) and in the Queue report CSV', () => {
    expect(named(copy, 'reference_images 1').name).toBe('shoot/portrait.png');
    const job = { input: copy, prompt: null, state: 'done', taskId: 't', charged: 'yes', estimateCredits: null };
    const csv = reportCsv({ jobs: [{ ...job, actualCredits: 1, outputs: [], error: null }] } as unknown as BatchReport);
    expect(csv.split('\r\n')[1]).toMatch(/^shoot\/portrait\.png,done,/);
    expect(csv).not.toContain(DROP);
  });
});
