import type { AuditFilters } from './contract/audit.ts';
import { formatDate } from './dates.ts';
import { numberText } from './number-text.ts';

/** Shortest word matched inside names, e-mails and event types; shorter words match whole words (core audit/search.ts). */
export const MIN_SEARCH_PART = 3;

/** A day of the audit log (which counts in UTC) from an ISO date or instant, in the one date format. */
const dayText = (iso: string): string => formatDate(iso, { utc: true });

/** The filters other than the search, as a person names them: what narrows the events besides the words. */
export function narrowingFilters(f: AuditFilters): string[] {
  const out: string[] = [];
  if (f.from && f.to) out.push(`dates ${dayText(f.from)} to ${dayText(f.to)}`);
  else if (f.from) out.push(`from ${dayText(f.from)}`);
  else if (f.to) out.push(`up to ${dayText(f.to)}`);
  if (f.eventTypes?.length) out.push(f.eventTypes.length === 1 ? `event type ${f.eventTypes[0]}` : 'event types');
  if (f.memberIds?.length || f.noUserIdEmails?.length || f.noUserId) out.push('member');
  if (f.groupIds?.length) out.push(f.groupIds.length === 1 ? `group ${f.groupIds[0]}` : 'groups');
  if (f.folderRefs?.length) out.push(f.folderRefs.length === 1 ? `folder ${f.folderRefs[0]}` : 'folders');
  if (f.requestId) out.push('one request');
  if (f.correlationId) out.push('one correlation');
  return out;
}

/**
 * Why a search or filter found nothing, and what to try: the screen and `mediadesk audit query`
 * say the same. `cache` is what the local cache holds (audit.status).
 */
export function noMatchText(
  f: AuditFilters,
  cache: { events: number; oldest: string | null; newest: string | null },
  clearWhat = 'clearing the filters',
): string {
  if (cache.events === 0) return 'The audit cache holds no events yet: sync or import an export first.';
  const span = cache.oldest && cache.newest ? ` from ${dayText(cache.oldest)} to ${dayText(cache.newest)}` : '';
  const what = f.search ? `“${f.search}”` : 'these filters';
  const cached = `${numberText(cache.events)} cached ${cache.events === 1 ? 'event' : 'events'}`;
  const tries: string[] = [];
  if (f.search) {
    const words = f.search.split(/\s+/).filter(Boolean);
    if (words.length > 1) tries.push('fewer words');
    tries.push('part of a name, e-mail or event type');
    if (words.some((w) => [...w.replace(/\*$/, '')].length < MIN_SEARCH_PART))
      tries.push(`words of ${MIN_SEARCH_PART}+ letters (shorter ones match whole words only)`);
  }
  const narrowing = narrowingFilters(f);
  if (narrowing.length && f.search) tries.push(`${clearWhat} (${narrowing.length} active: ${narrowing.join(', ')})`);
  else if (narrowing.length) tries.push(`${clearWhat} (${narrowing.join(', ')})`);
  const advice = tries.length ? ` Try ${joinOr(tries)}.` : '';
  return `No events match ${what} in the ${cached}${span}.${advice}`;
}

function joinOr(list: string[]): string {
  return list.length < 2 ? list.join('') : `${list.slice(0, -1).join(', ')}, or ${list[list.length - 1]}`;
}
