const LOG_MAX = 5000;

/**
 * Counters for `/__sandbox/stats`: requests per route pattern, creates per tool per key, and the
 * query parameters task lists were sent (they declare none, so a client should send none).
 */
export class Stats {
  requests: Record<string, number> = {};
  creates: Record<string, Record<string, number>> = {};
  listParams: Record<string, number> = {};
  /** Credits charged on accepted creates, per tool: what the credit usage reports beside its history. */
  charges: Record<string, { uses: number; credits: number }> = {};
  /** Files stored by PUTs to upload URLs, and PUTs refused, by why (api_key, expired, headers, signature, fault, empty). */
  uploads: { stored: number; refused: Record<string, number> } = { stored: 0, refused: {} };
  /** Audit-log searches per API key: two admins' processes tell apart by their keys. */
  auditSearches: Record<string, number> = {};
  /** The newest requests a client made, `METHOD /path` (no query), control API excluded: what the service would see. */
  log: string[] = [];

  request(routeKey: string): void {
    this.requests[routeKey] = (this.requests[routeKey] ?? 0) + 1;
  }

  /** One request a client made to the API, the upload host or a download. */
  logRequest(method: string, path: string): void {
    this.log.push(`${method} ${path}`);
    if (this.log.length > LOG_MAX) this.log.splice(0, this.log.length - LOG_MAX);
  }

  uploadStored(): void {
    this.uploads.stored++;
  }

  uploadRefused(why: string): void {
    this.uploads.refused[why] = (this.uploads.refused[why] ?? 0) + 1;
  }

  auditSearch(key: string): void {
    this.auditSearches[key] = (this.auditSearches[key] ?? 0) + 1;
  }

  create(toolId: string, key: string): void {
    const perKey = (this.creates[toolId] ??= {});
    perKey[key] = (perKey[key] ?? 0) + 1;
  }

  charge(toolId: string, credits: number): void {
    const c = (this.charges[toolId] ??= { uses: 0, credits: 0 });
    c.uses++;
    c.credits += credits;
  }

  /** One task-list request, with the names of the query parameters it carried. */
  listRequest(names: readonly string[]): void {
    for (const n of names) this.listParams[n] = (this.listParams[n] ?? 0) + 1;
  }

  reset(): void {
    this.requests = {};
    this.creates = {};
    this.auditSearches = {};
    this.listParams = {};
    this.charges = {};
    this.uploads = { stored: 0, refused: {} };
    this.log = [];
  }
}

/** Per-key daily quotas (audit search 500/day, credit usage 100/day), keyed by UTC day. */
export class DailyQuota {
  private counts = new Map<string, number>();
  private readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
  }

  /** Counts one request; false when the key is over its limit for the day. */
  take(key: string, nowMs: number): boolean {
    const id = `${key}\u0000${new Date(nowMs).toISOString().slice(0, 10)}`;
    const n = (this.counts.get(id) ?? 0) + 1;
    this.counts.set(id, n);
    return n <= this.limit;
  }

  reset(): void {
    this.counts.clear();
  }
}
