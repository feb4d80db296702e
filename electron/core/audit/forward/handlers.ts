import type { auditForwardCommands } from '../../../../shared/contract/audit-forward.ts';
import type { HandlerMap } from '../../../../shared/contract/define.ts';
import type { AuditForwarder } from './service.ts';

/** The forwarding commands over one forwarder: the app's IPC, the web host and the CLI serve these. */
export function forwardHandlers(f: AuditForwarder): HandlerMap<typeof auditForwardCommands> {
  return {
    'audit.forward': async ({ sinkId }) => ({ reports: await f.forward({ sinkId }) }),
    'audit.forwardStatus': () => f.status(),
    'audit.sinkSave': ({ sink, secret }) => f.saveSink(sink, secret),
    'audit.sinkRemove': ({ id }) => f.removeSink(id),
    'audit.sinkRefused': ({ id, limit }) => ({ events: f.refused(id, limit) }),
  };
}
