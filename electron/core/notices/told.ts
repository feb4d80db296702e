import { readFileSync } from 'node:fs';
import { writeJsonWhole } from '../write-whole.ts';
import type { ToldSet } from './decide.ts';

/** The newest keys kept: enough for every batch a person could have ended recently. */
const KEEP = 2000;

/**
 * The notices already told, in a small JSON file of the data folder, so neither a reload nor a
 * restart tells an end twice. Each save merges the file's keys first: another process on the same
 * data folder (the desktop app beside the web host) keeps the ones it told.
 */
export class ToldFile implements ToldSet {
  private readonly path: string;
  private keys: Set<string>;

  constructor(path: string) {
    this.path = path;
    this.keys = new Set(this.read());
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  add(keys: readonly string[]): void {
    const merged = [...new Set([...this.read(), ...this.keys, ...keys])];
    this.keys = new Set(merged.slice(-KEEP));
    try {
      writeJsonWhole(this.path, { told: [...this.keys] });
    } catch {
      // A file that cannot be written (a full disk) still leaves this process telling each end once.
    }
  }

  private read(): string[] {
    try {
      const told = (JSON.parse(readFileSync(this.path, 'utf8')) as { told?: unknown }).told;
      return Array.isArray(told) ? told.filter((k): k is string => typeof k === 'string') : [];
    } catch {
      return [];
    }
  }
}
