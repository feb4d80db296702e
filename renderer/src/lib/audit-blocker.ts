import { formatDateTime } from '../../../shared/dates.ts';
import type { SyncErrorKind } from '../../../shared/contract/audit.ts';

/** A 403 or 429 from the last sync, phrased for the person who has to act on it. */
export interface Blocker {
  kind: SyncErrorKind;
  title: string;
  text: string;
}

export function blockerFor(kind: SyncErrorKind, message: string, retryAfter: string | null): Blocker | null {
  switch (kind) {
    case 'forbidden_role':
      return {
        kind,
        title: 'Audit logs need a team admin or owner',
        text: 'The API key in use belongs to a team member. Ask an admin or owner of the team for a key with that role; the cached events below stay readable.',
      };
    case 'forbidden_plan':
      return {
        kind,
        title: 'Your plan has no audit logs',
        text: 'Audit-log search is part of the Enterprise plan with audit logs enabled. Imported exports still work offline.',
      };
    case 'forbidden_disabled':
      return {
        kind,
        title: 'Audit logs are turned off for this team',
        text: 'An owner can enable audit logs in the team settings. Imported exports still work offline.',
      };
    case 'forbidden':
      return { kind, title: 'The API refused the audit log (403)', text: message };
    case 'unauthorized':
      return { kind, title: 'The API key was not accepted (401)', text: 'Check the key in Settings.' };
    case 'rate_limited':
      return {
        kind,
        title: 'The API asked us to slow down (429)',
        text: retryAfter
          ? `Sync is paused until ${formatDateTime(retryAfter, { utc: true })} UTC; it continues from where it stopped.`
          : 'Try again in a moment; the sync continues from where it stopped.',
      };
    case 'budget_exhausted':
      return {
        kind,
        title: "Today's request budget is used up",
        text: 'The app never exceeds the daily audit request limit. The sync continues tomorrow (UTC) from where it stopped.',
      };
    case 'server':
      return { kind, title: 'The API had a server error', text: message };
    case 'invalid':
      return { kind, title: 'The API rejected the request', text: message };
    case 'disk_full':
      return { kind, title: 'The disk holding the audit cache is full', text: message };
    case 'busy':
      return { kind, title: 'Another process kept the audit cache busy', text: message };
    case 'team_server':
      return { kind, title: 'The team archive did not take the sync', text: message };
    default:
      return null;
  }
}
