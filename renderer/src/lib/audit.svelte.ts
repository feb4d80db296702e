import { formatDateTime } from '../../../shared/dates.ts';
import type {
  AuditFacets,
  AuditFilters,
  AuditQueryResponse,
  AuditRow,
  AuditSort,
  AuditStatus,
  AuditTimeline,
  SyncProgress,
  SyncReport,
} from '../../../shared/contract/audit.ts';
import { NO_USER_ID_EMAIL } from '../../../shared/contract/audit-words.ts';
import { call, on, errorText } from './bridge.ts';
import { adoptRunning } from './running.ts';
import { rangeReversed } from '../../../shared/validation/dates.ts';
import { memberNames } from './member-names.svelte.ts';

/** Rows per `audit.query` call: big enough that a fast fling costs few round trips, small enough to answer in a frame. */
export const PAGE = 200;
/** Pages kept in memory; a 1,000,000-row view holds at most this many × PAGE rows. */
const MAX_PAGES = 40;

/** The filter state the UI edits; `toFilters` turns it into the contract's shape (no empty fields). */
export interface FilterState {
  from: string;
  to: string;
  memberIds: number[];
  /** Actors without a user id (API keys, the system) by e-mail ('' : none): the member facet's entries for them. */
  noUserIdEmails: string[];
  groupIds: number[];
  folderRefs: string[];
  eventTypes: string[];
  requestId: string;
  correlationId: string;
  search: string;
}

export const emptyFilters = (): FilterState => ({
  from: '',
  to: '',
  memberIds: [],
  noUserIdEmails: [],
  groupIds: [],
  folderRefs: [],
  eventTypes: [],
  requestId: '',
  correlationId: '',
  search: '',
});

export function toFilters(f: FilterState): AuditFilters {
  const out: AuditFilters = {};
  if (f.from) out.from = f.from;
  if (f.to) out.to = f.to;
  if (f.memberIds.length) out.memberIds = [...f.memberIds];
  if (f.noUserIdEmails.length) out.noUserIdEmails = [...f.noUserIdEmails];
  if (f.groupIds.length) out.groupIds = [...f.groupIds];
  if (f.folderRefs.length) out.folderRefs = [...f.folderRefs];
  if (f.eventTypes.length) out.eventTypes = [...f.eventTypes];
  if (f.requestId.trim()) out.requestId = f.requestId.trim();
  if (f.correlationId.trim()) out.correlationId = f.correlationId.trim();
  if (f.search.trim()) out.search = f.search.trim();
  return out;
}

/**
 * The member dimension of the filters as the facet's values: a user id's digits, or NO_USER_ID_EMAIL
 * and the e-mail of an actor without one. The facet list, the select and the chips share these.
 */
export const chosenMembers = (f: FilterState): string[] => [
  ...f.memberIds.map(String),
  ...f.noUserIdEmails.map((e) => NO_USER_ID_EMAIL + e),
];

/** Puts the member filter to exactly `values` (facet values; unknown ones are left out). */
export function chooseMembers(f: FilterState, values: readonly string[]): void {
  f.memberIds = values.filter((v) => /^\d+$/.test(v)).map(Number);
  f.noUserIdEmails = values.filter((v) => v.startsWith(NO_USER_ID_EMAIL)).map((v) => v.slice(NO_USER_ID_EMAIL.length));
}

/** Adds the member facet's value to the member filter, or takes it out. */
export function toggleMember(f: FilterState, value: string): void {
  const cur = chosenMembers(f);
  chooseMembers(f, cur.includes(value) ? cur.filter((v) => v !== value) : [...cur, value]);
}

type MemberEntry = AuditFacets['members'][number];

/** How a member facet value reads: a member's e-mail (else its id); an actor without a user id by e-mail and type. */
export function memberText(value: string, entries: readonly MemberEntry[] | undefined): string {
  const m = entries?.find((x) => x.value === value);
  if (!value.startsWith(NO_USER_ID_EMAIL)) return m?.label ?? memberNames.label(Number(value));
  const email = value.slice(NO_USER_ID_EMAIL.length);
  return `${email || 'no e-mail'} (${m?.actorType ?? 'no user id'})`;
}

export { blockerFor, type Blocker } from './audit-blocker.ts';

/** An ISO instant in the app's date and time format, in UTC (the API's and the filters' time zone). */
export const fmtDateTime = (iso: string): string => formatDateTime(iso, { utc: true });

export function fmtAgo(iso: string | null, now = Date.now()): string {
  if (!iso) return 'never';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}

/**
 * How often a window showing the audit screen asks whether another process (the mediadesk CLI,
 * the app's other host) is loading the cache or has added to it: audit.status costs two pragmas
 * while nothing changed (store.counts).
 */
export const ELSEWHERE_POLL_MS = 3000;

const nf = new Intl.NumberFormat('en');
export const fmtCount = (n: number) => nf.format(n);

/**
 * The audit viewer's state. Rows live in a plain Map of pages, not a deep $state proxy (a million
 * proxies would cost more than the table); `version` is the one signal that a page arrived.
 */
export class AuditStore {
  filters = $state<FilterState>(emptyFilters());
  sort = $state<AuditSort>({ field: 'date', dir: 'desc' });
  /** Matches of the current filters; null until the first answer. */
  total = $state<number | null>(null);
  version = $state(0);
  queryError = $state('');
  facets = $state<AuditFacets | null>(null);
  bucket = $state<'hour' | 'day'>('day');
  timeline = $state<AuditTimeline | null>(null);
  status = $state<AuditStatus | null>(null);
  /** The app's import runs (this window's or another's): the Import button says so while its panel is closed. */
  importing = $state(false);
  statusError = $state('');
  syncing = $state(false);
  /** Stop sync was pressed (here, or in the window this one was reloaded from) for the sync running. */
  syncStopping = $state(false);
  progress = $state<SyncProgress | null>(null);
  lastReport = $state<SyncReport | null>(null);
  /** With a search and a team server set: whether the team archive's index or this cache's answered it. */
  searchedIn = $state<AuditQueryResponse['searchedIn'] | null>(null);
  online = $state(typeof navigator === 'undefined' ? true : navigator.onLine);
  /** Another process importing into or syncing the cache now (audit.status, asked every few seconds). */
  elsewhere = $state<AuditStatus['elsewhere']>({ importing: false, syncing: false });
  /**
   * The cache changed under the view (another process added events) since the table, counts and
   * chart were loaded: `added` events more (0 or less: changed all the same). Shown as an offer,
   * never applied by itself, so the rows being read do not move. Null: nothing new.
   */
  changed = $state<{ added: number } | null>(null);

  /** The count and newest date the view was loaded at (the last refreshStatus). */
  private shown: { events: number; newest: string | null } | null = null;
  /** Bumped by every refreshStatus: a poll sent before one must not compare against the counts it set. */
  private statusGen = 0;

  /* eslint-disable svelte/prefer-svelte-reactivity -- plain on purpose: `version` says when rows change */
  private pages = new Map<number, AuditRow[]>();
  /** `next` cursor after each loaded page: the following page then costs a keyset seek, not an OFFSET scan. */
  private cursors = new Map<number, string | null>();
  private loading = new Set<number>();
  /* eslint-enable svelte/prefer-svelte-reactivity */
  /** Bumped on every filter or sort change; answers of an older generation are dropped. */
  private gen = 0;
  /**
   * Timelines asked for (a filter change's, with the facets, or an Hour/Day switch's): only the
   * last one asked is drawn, so a late answer by day never lands under "Events per hour".
   */
  private timelineAsked = 0;
  private lastWanted = 0;
  /** The filters the current total counts; a sort change alone keeps the total (counting 1M rows is the slow part). */
  private countedKey = '';

  /** The contract's filters for the current state (what export and facets get too). */
  get apiFilters(): AuditFilters {
    return toFilters(this.filters);
  }

  /** Dates the wrong way round: nothing can match, and the contract refuses to ask. */
  get reversed(): boolean {
    return rangeReversed(this.filters.from || undefined, this.filters.to || undefined);
  }

  rowAt(i: number): AuditRow | undefined {
    void this.version;
    return this.pages.get(Math.floor(i / PAGE))?.[i % PAGE];
  }

  /** New filters or sort: drop every cached page and ask again; `fresh` after the cache itself changed (sync, import). */
  async reload(fresh = false): Promise<void> {
    const gen = ++this.gen;
    this.pages.clear();
    this.cursors.clear();
    this.loading.clear();
    // Page 0 comes with the count below; the table must not ask for it a second time meanwhile.
    this.loading.add(0);
    this.version++;
    const filters = this.apiFilters;
    const sort = $state.snapshot(this.sort);
    const key = JSON.stringify(filters);
    const sameFilters = !fresh && key === this.countedKey && this.total !== null;
    if (this.reversed) {
      // The filter bar names the problem; the table, facets and chart show the empty answer.
      this.total = 0;
      this.countedKey = '';
      this.queryError = '';
      this.facets = { eventTypes: [], members: [] };
      this.timeline = { bucket: this.bucket, points: [] };
      this.loading.delete(0);
      return;
    }
    try {
      const res = await call('audit.query', { filters, sort, limit: PAGE, offset: 0, withTotal: !sameFilters });
      if (gen !== this.gen) return;
      this.pages.set(0, res.rows);
      this.cursors.set(0, res.next);
      this.searchedIn = res.searchedIn ?? null;
      if (!sameFilters) this.total = res.total ?? res.rows.length;
      this.countedKey = key;
      this.queryError = '';
      this.version++;
    } catch (err) {
      if (gen !== this.gen) return;
      this.total = 0;
      this.countedKey = '';
      this.queryError = errorText(err);
    } finally {
      if (gen === this.gen) this.loading.delete(0);
    }
    // Facets and the timeline do not depend on the sort.
    if (!sameFilters) void this.loadAggregates(gen);
  }

  async loadAggregates(gen = this.gen): Promise<void> {
    const filters = this.apiFilters;
    const asked = ++this.timelineAsked;
    try {
      const [facets, timeline] = await Promise.all([
        call('audit.facets', { filters, limit: 50 }),
        call('audit.timeline', { filters, bucket: this.bucket }),
      ]);
      if (gen !== this.gen) return;
      this.facets = facets;
      // Hour or Day switched meanwhile: that switch asked for its own timeline, which is the one to draw.
      if (asked === this.timelineAsked) this.timeline = timeline;
    } catch (err) {
      if (gen === this.gen) this.queryError = errorText(err);
    }
  }

  /** The table asks for the rows it is about to show; pages already here or on the way are skipped. */
  ensure(start: number, end: number): void {
    if (this.total === null) return;
    const last = Math.min(end, this.total - 1);
    this.lastWanted = Math.floor(start / PAGE);
    for (let p = Math.floor(Math.max(0, start) / PAGE); p * PAGE <= last; p++) {
      if (!this.pages.has(p) && !this.loading.has(p)) void this.fetchPage(p);
    }
  }

  private async fetchPage(p: number): Promise<void> {
    const gen = this.gen;
    this.loading.add(p);
    const prev = this.cursors.get(p - 1);
    const req = prev ? { after: prev } : { offset: p * PAGE };
    try {
      const res = await call('audit.query', {
        filters: this.apiFilters,
        sort: $state.snapshot(this.sort),
        limit: PAGE,
        ...req,
      });
      if (gen !== this.gen) return;
      this.pages.set(p, res.rows);
      this.cursors.set(p, res.next);
      this.evict();
      this.version++;
    } catch (err) {
      if (gen === this.gen) this.queryError = errorText(err);
    } finally {
      if (gen === this.gen) this.loading.delete(p);
    }
  }

  /** Forget the pages farthest from where the user is looking. */
  private evict(): void {
    if (this.pages.size <= MAX_PAGES) return;
    const far = [...this.pages.keys()].sort((a, b) => Math.abs(b - this.lastWanted) - Math.abs(a - this.lastWanted));
    for (const p of far.slice(0, this.pages.size - MAX_PAGES)) {
      this.pages.delete(p);
      this.cursors.delete(p);
    }
  }

  async setBucket(b: 'hour' | 'day'): Promise<void> {
    this.bucket = b;
    const asked = ++this.timelineAsked;
    const gen = this.gen;
    if (this.reversed) {
      this.timeline = { bucket: b, points: [] };
      return;
    }
    // Drawn only if no timeline was asked for since (another switch, or a filter change's).
    const latest = () => asked === this.timelineAsked && gen === this.gen;
    try {
      const timeline = await call('audit.timeline', { filters: this.apiFilters, bucket: b });
      if (latest()) this.timeline = timeline;
    } catch (err) {
      if (latest()) this.queryError = errorText(err);
    }
  }

  async refreshStatus(): Promise<void> {
    const gen = ++this.statusGen;
    try {
      const s = await call('audit.status', {});
      if (gen !== this.statusGen) return;
      this.status = s;
      this.importing = s.running.import !== null;
      this.elsewhere = s.elsewhere;
      this.shown = { events: s.events, newest: s.newest };
      this.changed = null;
      this.statusError = '';
    } catch (err) {
      if (gen === this.statusGen) this.statusError = errorText(err);
    }
  }

  /**
   * Polled: whether another process loads the cache or added events since the view loaded. A change
   * during this app's own import or sync is its own, shown when that ends.
   */
  async poll(): Promise<void> {
    const gen = this.statusGen;
    const ownBefore = this.importing || this.syncing;
    let s: AuditStatus;
    try {
      s = await call('audit.status', {});
    } catch {
      // The status line says why when it is next asked for; a poll stays quiet.
      return;
    }
    if (gen !== this.statusGen || !this.shown) return;
    this.elsewhere = s.elsewhere;
    if (ownBefore || this.importing || this.syncing || s.running.import || s.running.sync) return;
    if (s.events === this.shown.events && s.newest === this.shown.newest) {
      this.status = s;
      this.changed = null;
    } else this.changed = { added: s.events - this.shown.events };
  }

  /** "Show them": the table, counts, facets, chart and status line as the cache is now. */
  showChanges(): Promise<void> {
    return this.refreshed();
  }

  async sync(): Promise<void> {
    if (this.syncing) return;
    this.syncing = true;
    this.syncStopping = false;
    this.progress = null;
    try {
      this.lastReport = await call('audit.sync', {});
    } catch (err) {
      this.statusError = errorText(err);
    } finally {
      this.syncing = this.syncStopping = false;
      await this.refreshed();
    }
  }

  /** Stops the app's sync after the page in hand; its end comes as the sync's answer or audit.syncDone. */
  async stopSync(): Promise<void> {
    this.syncStopping = true;
    try {
      await call('audit.syncCancel', {});
    } catch (err) {
      this.statusError = errorText(err);
    }
  }

  /** After the cache changed (a sync, an import of any window's): the status and the rows again. */
  private async refreshed(): Promise<void> {
    await this.refreshStatus();
    await this.reload(true);
  }

  /** The last sync's trouble, if it is newer than the last success. */
  get lastError(): AuditStatus['lastError'] {
    const s = this.status;
    if (!s?.lastError) return null;
    if (s.lastSuccessAt && Date.parse(s.lastSuccessAt) > Date.parse(s.lastError.at)) return null;
    return s.lastError;
  }

  get offline(): boolean {
    return !this.online || this.lastError?.kind === 'network';
  }

  /** Subscriptions for the life of the screen; returns their undo. */
  start(): () => void {
    // A sync this window did not start (another tab's, started before this one opened or after,
    // or this window's own before a reload) shows its progress and Stop here too, and its end the
    // report its own would. Stop pressed in any window: its Stop and progress line say so at once.
    let adopted = false;
    const offSync = adoptRunning('sync', {
      busy: () => this.syncing,
      follow: (r) => {
        adopted = this.syncing = true;
        this.progress = r.progress;
        this.syncStopping = r.stopping;
      },
      progress: (p) => (this.progress = p),
      stopping: () => (this.syncStopping = true),
      done: (d) => {
        if (!adopted) return;
        adopted = this.syncing = this.syncStopping = false;
        if (d.report) this.lastReport = d.report;
        if (d.error) this.statusError = d.error;
        void this.refreshed();
      },
    });
    const offImporting = on('audit.importProgress', () => (this.importing = true));
    const offImport = on('audit.importDone', () => {
      this.importing = false;
      void this.refreshed();
    });
    const net = () => (this.online = navigator.onLine);
    addEventListener('online', net);
    addEventListener('offline', net);
    void this.refreshStatus();
    void this.reload();
    const poller = setInterval(() => {
      if (document.visibilityState === 'visible') void this.poll();
    }, ELSEWHERE_POLL_MS);
    return () => {
      clearInterval(poller);
      offSync();
      offImporting();
      offImport();
      removeEventListener('online', net);
      removeEventListener('offline', net);
    };
  }
}
