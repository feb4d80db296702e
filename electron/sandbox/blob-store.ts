import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Files the Sandbox keeps on disk rather than in memory: decoded task inputs (deduplicated by
 * content hash) and files PUT to upload URLs (under their file id). One temp folder, removed on close.
 */
export interface StoredFile {
  path: string;
  size: number;
  contentType: string;
}

export class DiskStore {
  readonly dir: string;
  private files = new Map<string, StoredFile>();

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), 'mediadesk-sandbox-'));
  }

  /** The id bytes are (or would be) stored under as an input: their content hash. */
  inputIdOf(bytes: Buffer): string {
    return `inp_${createHash('sha256').update(bytes).digest('hex').slice(0, 24)}`;
  }

  /** Stores bytes under their hash; the same input twice costs one file. */
  putInput(bytes: Buffer, contentType: string, id = this.inputIdOf(bytes)): string {
    if (!this.files.has(id)) this.write(id, bytes, contentType);
    return id;
  }

  get(id: string): StoredFile | undefined {
    return this.files.get(id);
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  private write(id: string, bytes: Buffer, contentType: string): void {
    const path = join(this.dir, id);
    writeFileSync(path, bytes);
    this.files.set(id, { path, size: statSync(path).size, contentType });
  }
}
