/**
 * The words the audit drawer shows for an event's keys (`request_id` is "Request ID"); the key itself
 * stays in the field's tooltip and in "Raw event (JSON)". Keys the service adds later read as words too.
 */
const LABELS: Record<string, string> = {
  event_type: 'Event type',
  resource_id: 'Resource',
  duration_ms: 'Duration (ms)',
  project_name: 'Project',
  folder_name: 'Folder',
  email: 'E-mail',
  user_id: 'User ID',
  referer: 'Referrer',
  target_user_id: 'Member affected (user ID)',
  folder_reference: 'Folder ID',
  project_reference: 'Project ID',
  share_type: 'Shared as',
};

export function auditLabel(key: string): string {
  if (LABELS[key]) return LABELS[key];
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_\-.]+/g, ' ')
    .trim()
    .toLowerCase()
    .replace(/\bid\b/g, 'ID')
    .replace(/\burl\b/g, 'URL')
    .replace(/\bip\b/g, 'IP');
  return words ? words[0].toUpperCase() + words.slice(1) : key;
}
