// What the audit screens and the CLI say and send, without zod: the renderer reads these without
// building the contract's schemas (audit.ts re-exports them).

/** The search box's examples, shown in its placeholder; a test runs each against the Sandbox's events. */
export const AUDIT_SEARCH_EXAMPLES = ['role_changed', 'admin folder*'] as const;

/**
 * The member facet's value for an actor without a user id is this prefix and its e-mail ('' : none),
 * which filters.noUserIdEmails takes; a member's value is its user id, digits, so the two never meet.
 */
export const NO_USER_ID_EMAIL = 'no-user-id:';

/** Why an `audit.import` asked for while another runs is refused (the app says the same of a second drop). */
export const IMPORT_RUNNING = 'An import is already running: wait for it to finish, or stop it, then import again.';
