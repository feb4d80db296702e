import type { HandlerMap } from '../../../shared/contract/define.ts';
import type { auditCommands } from '../../../shared/contract/audit.ts';
import { DeskError } from '../../../shared/contract/define.ts';
import type { AuditService } from './service.ts';

/** The audit commands over one service. Sync stops are answers (outcome 'stopped'), not thrown errors. */
export function auditHandlers(service: AuditService): HandlerMap<typeof auditCommands> {
  return {
    'audit.sync': () => service.sync(),
    'audit.syncCancel': () => ({ stopped: service.cancelSync() }),
    'audit.status': () => service.status(),
    'audit.import': async ({ paths }) => {
      try {
        return { reports: await service.importTracked(paths) };
      } catch (err) {
        if (err instanceof DeskError) throw err;
        throw new DeskError('invalid', err instanceof Error ? err.message : String(err));
      }
    },
    'audit.importCancel': () => ({ stopped: service.cancelImport() }),
    'audit.query': (req) => service.query(req),
    'audit.event': ({ eventId }) => service.event(eventId),
    'audit.facets': ({ filters, limit }) => service.facets(filters, limit),
    'audit.timeline': ({ filters, bucket }) => service.timeline(filters, bucket),
    'audit.export': (req) => service.export(req),
  };
}
