import { DEMO_KEY_PLANS, type PlanTier } from '../../shared/service-limits.ts';

/**
 * The built-in demo keys. Identity, plan and role come from the key alone (the spec: no request
 * carries a user or team id), so each key maps to one fixed user of one team.
 */
export type Plan = PlanTier;
export type Role = 'owner' | 'admin' | 'member';

export interface DemoKey {
  key: string;
  plan: Plan;
  role: Role;
  auditLogs: boolean;
  description: string;
}

export interface Caller extends DemoKey {
  userId: number;
  email: string;
  teamId: number;
}

export const DEMO_KEYS: readonly DemoKey[] = [
  {
    key: 'sandbox-owner',
    plan: DEMO_KEY_PLANS['sandbox-owner'],
    role: 'owner',
    auditLogs: true,
    description: 'Enterprise team owner, audit logs enabled: every endpoint.',
  },
  {
    key: 'sandbox-admin',
    plan: DEMO_KEY_PLANS['sandbox-admin'],
    role: 'admin',
    auditLogs: true,
    description: 'Enterprise team admin, audit logs enabled: every endpoint.',
  },
  {
    key: 'sandbox-member',
    plan: DEMO_KEY_PLANS['sandbox-member'],
    role: 'member',
    auditLogs: true,
    description: 'Enterprise member: 403 on the audit search.',
  },
  {
    key: 'sandbox-business',
    plan: DEMO_KEY_PLANS['sandbox-business'],
    role: 'admin',
    auditLogs: false,
    description: 'Business-plan admin: 403 on the audit search and on workflow apps.',
  },
  {
    key: 'sandbox-noaudit',
    plan: DEMO_KEY_PLANS['sandbox-noaudit'],
    role: 'owner',
    auditLogs: false,
    description: 'Enterprise owner with audit logs disabled: 403 on the audit search.',
  },
];

/** The enterprise keys share team 1 (the seeded team the audit trail and analytics describe). */
const IDENTITIES: Record<string, { userId: number; email: string; teamId: number }> = {
  'sandbox-owner': { userId: 1, email: 'owner@sandbox.test', teamId: 1 },
  'sandbox-admin': { userId: 2, email: 'admin@sandbox.test', teamId: 1 },
  'sandbox-member': { userId: 3, email: 'member@sandbox.test', teamId: 1 },
  'sandbox-business': { userId: 501, email: 'admin@business.sandbox.test', teamId: 2 },
  'sandbox-noaudit': { userId: 601, email: 'owner@noaudit.sandbox.test', teamId: 3 },
};

const CALLERS = new Map<string, Caller>(DEMO_KEYS.map((k) => [k.key, { ...k, ...IDENTITIES[k.key] }]));

export function callerOf(key: string): Caller | undefined {
  return CALLERS.get(key);
}
