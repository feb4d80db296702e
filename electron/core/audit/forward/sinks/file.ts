import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { SinkConfig } from '../../../../../shared/audit-sinks.ts';
import { writeWhole } from '../../../write-whole.ts';
import type { OutEvent } from '../read.ts';
import { allTaken, type SendResult, type Sink } from '../sink.ts';

type FileConfig = Extract<SinkConfig, { kind: 'file' }>;

const hourOf = (ts: number) => new Date(ts).toISOString().slice(0, 13);

/**
 * Gzipped NDJSON in GitHub's audit-log streaming layout, `YYYY/MM/DD/HH/<timestamp>-<uuid>.json.gz`
 * (the hour of the events, each file one hour's), which object-storage collectors ingest. A file is
 * written whole then renamed; its name follows from its first event, so a batch sent again after a
 * crash replaces the file rather than adding a second copy.
 */
export class FileSink implements Sink {
  readonly id: string;
  private readonly folder: string;

  constructor(cfg: FileConfig) {
    this.id = cfg.id;
    this.folder = cfg.folder;
  }

  sizeOf(e: OutEvent): number {
    return Buffer.byteLength(e.json) + 1;
  }

  groupOf(e: OutEvent): string {
    return hourOf(e.ts);
  }

  async send(batch: readonly OutEvent[]): Promise<SendResult> {
    const first = batch[0];
    const iso = new Date(first.ts).toISOString();
    const dir = join(this.folder, iso.slice(0, 4), iso.slice(5, 7), iso.slice(8, 10), iso.slice(11, 13));
    const h = createHash('sha256').update(`${this.id}\n${first.ts}\n${first.eventId}`).digest('hex');
    const uuid = `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
    const stamp = iso.replace(/[-:]/g, '').replace('.', '');
    mkdirSync(dir, { recursive: true });
    const text = batch.map((e) => e.json).join('\n') + '\n';
    writeWhole(join(dir, `${stamp}-${uuid}.json.gz`), gzipSync(text));
    return allTaken();
  }

  async close(): Promise<void> {}
}
