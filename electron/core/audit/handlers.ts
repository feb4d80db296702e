import type { HandlerMap } from '../../../shared/contract/define.ts';
import type { auditCommands } from '../../../shared/contract/audit.ts';
import { DeskError } from '../../../shared/contract/define.ts';
import type { AuditService } from './service.ts';
import { freePath } from '../saved-files.ts';

/**
 * The audit commands over one service. Sync stops are answers (outcome 'stopped'), not thrown errors.
 * `saveDir`: where an export is written, under a name the app gives it (SAVED_FILES_RULE).
 */
export function auditHandlers(
  service: AuditService,
  saveDir: () => string = () => {
    throw new DeskError('unavailable', 'no folder for saved files here');
  },
): HandlerMap<typeof auditCommands> {
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
    'audit.query': (req) => service.querySearched(req),
    'audit.event': ({ eventId }) => service.event(eventId),
    'audit.facets': ({ filters, limit }) => service.facets(filters, limit),
    'audit.timeline': ({ filters, bucket }) => service.timeline(filters, bucket),
    'audit.export': (req) =>
      service.export({
        ...req,
        path: freePath(saveDir(), `audit-export-${new Date().toISOString().slice(0, 10)}.${req.format}`),
      }),
  };
}
