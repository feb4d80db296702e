interface AnsweredOperation {
  method: string;
  path: string;
  responses?: Record<string, { schema?: Record<string, unknown> }>;
}

/**
 * A create that answers its result at once (background removal, the classifier, the classic
 * text-to-image): its success answer has a schema with no task_id, and no by-id of the reference
 * covers its path. An empty schema (the Kling creates' answers point at a response object, not a
 * schema) or a by-id to ask is read as a task.
 */
export function answersAtOnceAmong(op: AnsweredOperation, operations: readonly AnsweredOperation[]): boolean {
  if (op.method !== 'POST') return false;
  const noTaskId = Object.entries(op.responses ?? {}).some(
    ([status, r]) =>
      status.startsWith('2') && Object.keys(r.schema ?? {}).length > 0 && !JSON.stringify(r).includes('"task_id"'),
  );
  if (!noTaskId) return false;
  return !operations.some((o) => {
    if (o.method !== 'GET' || !o.path.endsWith('/{task-id}')) return false;
    const l = o.path.slice(0, -'/{task-id}'.length);
    return op.path === l || op.path.startsWith(`${l}/`) || op.path.startsWith(`${l}-`);
  });
}
