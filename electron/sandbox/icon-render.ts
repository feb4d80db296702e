import type { FastifyInstance, FastifyRequest } from 'fastify';
import { renderImage } from './render.ts';
import { bufferSource, sendBytes } from './download.ts';
import { sendError, sendInvalid } from './errors.ts';
import { resultPath } from './results.ts';
import type { SandboxState } from './server.ts';
import { statusAt } from './tasks.ts';
import { taskEnvelope } from './tool-routes.ts';

/** The description's text-to-icon-format (a path parameter the reference does not record). */
export const ICON_FORMATS = ['png', 'svg'] as const;
const ICON_CREATES = ['/v1/ai/text-to-icon', '/v1/ai/text-to-icon/preview'];

type Params = { taskId: string; format: string };

/**
 * `POST /v1/ai/text-to-icon/{task-id}/render/{format}`: a finished icon task's icon in PNG or SVG,
 * answered as the task with that file in `generated`. The SVG holds the drawn PNG.
 */
export function registerIconRender(app: FastifyInstance, state: SandboxState): void {
  const iconTask = (req: FastifyRequest<{ Params: Params }>) => {
    const task = state.tasks.get(req.params.taskId);
    const caller = state.callerOf(req);
    return task && task.key === caller.key && ICON_CREATES.includes(task.listPath) ? task : undefined;
  };
  app.post('/v1/ai/text-to-icon/:taskId/render/:format', async (req: FastifyRequest<{ Params: Params }>, reply) => {
    const { format } = req.params;
    if (!(ICON_FORMATS as readonly string[]).includes(format))
      return sendInvalid(reply, [{ field: 'format', reason: `must be one of ${ICON_FORMATS.join(', ')}` }]);
    const task = iconTask(req);
    if (!task) return sendError(reply, 404, 'Task not found');
    const status = statusAt(task, state.now());
    if (status !== 'COMPLETED')
      return sendInvalid(reply, [
        { field: 'task-id', reason: `is ${status}; an icon renders once its task completed` },
      ]);
    const answer = taskEnvelope(task, status, state.baseUrl());
    const file = format === 'png' ? resultPath(task, 0, 'image') : `/icons/${task.id}.svg`;
    answer.data.generated = [state.baseUrl() + file];
    return reply.send(answer);
  });
  app.get('/icons/:file', async (req: FastifyRequest<{ Params: { file: string } }>, reply) => {
    const task = state.tasks.get(req.params.file.replace(/\.svg$/, ''));
    if (!task || !ICON_CREATES.includes(task.listPath) || statusAt(task, state.now()) !== 'COMPLETED')
      return sendError(reply, 404, 'No such icon');
    const png = await renderImage(task.toolId, task.id, { ...task.params, output_format: 'png' }, 0, state.disk);
    const size = 1024;
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" viewBox="0 0 ${size} ${size}"><image width="${size}" height="${size}" href="data:image/png;base64,${png.bytes.toString('base64')}"/></svg>`;
    sendBytes(req, reply, bufferSource(Buffer.from(svg), 'image/svg+xml'), state.faults.current);
  });
}
