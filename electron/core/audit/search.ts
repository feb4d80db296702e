import type { Statement } from 'better-sqlite3';
import { MIN_SEARCH_PART } from '../../../shared/audit-no-match.ts';
import type { Db } from '../db/open.ts';
import { MAX_NAME } from './event.ts';

/**
 * The event index keeps e-mails and event types whole, so a part of one never matched. Each distinct
 * name (event type, e-mail, project, folder) is kept once in search_names with a trigram index
 * (migration 8): a word of 3+ characters finds the names holding it, whose tokens join its alternatives.
 */

/** The names table and its trigram index; a trigger keeps the index in step with every insert. */
export const SEARCH_NAMES_SQL = `
  CREATE TABLE search_names (id INTEGER PRIMARY KEY, value TEXT NOT NULL UNIQUE);
  CREATE VIRTUAL TABLE search_names_grams USING fts5 (value, content = 'search_names', content_rowid = 'id', tokenize = 'trigram remove_diacritics 1');
  CREATE TRIGGER search_names_added AFTER INSERT ON search_names BEGIN
    INSERT INTO search_names_grams (rowid, value) VALUES (new.id, new.value);
  END;`;

/** The names of every cached event, for a cache made before search_names (migration 8): the fields event.ts takes; a stored event that no longer reads has none. */
export const FILL_SEARCH_NAMES_SQL = `
  INSERT OR IGNORE INTO search_names (value)
  SELECT v FROM (
    SELECT event_type AS v FROM events
    UNION SELECT member_email FROM events
    UNION SELECT json_extract(raw, '$.action.project_name') FROM events_raw WHERE json_valid(raw)
    UNION SELECT json_extract(raw, '$.action.folder_name') FROM events_raw WHERE json_valid(raw)
    UNION SELECT json_extract(raw, '$.source.project') FROM events_raw WHERE json_valid(raw)
    UNION SELECT json_extract(raw, '$.action.old_state.name') FROM events_raw WHERE json_valid(raw)
    UNION SELECT json_extract(raw, '$.action.new_state.name') FROM events_raw WHERE json_valid(raw)
  ) WHERE typeof(v) = 'text' AND v <> '' AND length(v) <= ${MAX_NAME}`;

/** Adds rows' names to search_names inside the caller's transaction; names this process already added are skipped in memory. */
export class NameRecorder {
  private readonly add: Statement;
  private readonly known = new Set<string>();

  constructor(db: Db) {
    this.add = db.prepare('INSERT OR IGNORE INTO search_names (value) VALUES (?)');
  }

  record(names: readonly string[]): void {
    for (const n of names) {
      if (this.known.has(n)) continue;
      this.add.run(n);
      this.known.add(n);
    }
  }

  /** A rolled-back transaction may have dropped names this process thought added. */
  forget(): void {
    this.known.clear();
  }
}

/**
 * What the event index's tokenizer (unicode61, tokenchars '@._-') treats as a separator. Combining
 * marks count as one: a diacritic is folded away by the index anyway, and other marks cut a token there.
 */
export const NOT_TOKEN = /[^\p{L}\p{N}\p{Co}@._-]+/u;
const hasWordCharacter = (p: string) => /[\p{L}\p{N}]/u.test(p);
const quote = (term: string) => `"${term.replaceAll('"', '""')}"`;
/** Case and accents folded, as both indexes fold them. */
const fold = (s: string) => s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();

/** Names, and tokens of them, a word may stand for: more would make one word a query of hundreds of terms. */
const MAX_NAMES = 100;
const MAX_WORDS = 32;

/**
 * The search text as an FTS5 query that cannot be a syntax error, words ANDed: a word is a whole token
 * (a token's start when it ends in `*`) or, at 3+ characters, inside a name. `db` null: no names.
 */
export function searchMatch(db: Db | null, search: string): string | null {
  const groups: string[] = [];
  const namesLike = db ? namesHolding(db) : null;
  for (const word of search.split(/\s+/)) {
    const star = word.length > 1 && word.endsWith('*');
    const body = star ? word.slice(0, -1) : word;
    // The index keeps no token positions (migration 5), so a word the tokenizer would cut in two
    // ("fld/2") is searched as its pieces ANDed instead of as a phrase.
    const pieces = body.split(NOT_TOKEN).filter(hasWordCharacter);
    if (!pieces.length) continue;
    // Whole tokens unless starred: a prefix term reads every matching doclist whole, where an exact one stops at the page.
    const typed = pieces.map((p) => `${quote(p)}${star ? '*' : ''}`).join(' AND ');
    const alternatives = new Set([pieces.length > 1 ? `(${typed})` : typed]);
    if (namesLike && [...body].length >= MIN_SEARCH_PART) for (const a of namesLike(body)) alternatives.add(a);
    groups.push(alternatives.size > 1 ? `(${[...alternatives].join(' OR ')})` : [...alternatives][0]);
    if (groups.length >= MAX_WORDS) break;
  }
  return groups.length ? groups.join(' AND ') : null;
}

/** For a word, the index terms of the names holding it: the tokens that hold it, else all of a name's tokens ANDed. */
function namesHolding(db: Db): (word: string) => string[] {
  const find = db.prepare('SELECT value FROM search_names_grams WHERE search_names_grams MATCH ? LIMIT ?').pluck();
  return (word) => {
    const part = fold(word);
    const out = new Set<string>();
    for (const name of find.all(quote(word), MAX_NAMES) as string[]) {
      const tokens = name.split(NOT_TOKEN).filter(hasWordCharacter);
      const holding = tokens.filter((t) => fold(t).includes(part));
      if (holding.length) for (const t of holding) out.add(quote(t));
      else if (tokens.length) out.add(`(${tokens.map(quote).join(' AND ')})`);
      if (out.size >= MAX_NAMES) break;
    }
    return [...out];
  };
}
