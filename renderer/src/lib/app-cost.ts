import { COST_UNKNOWN } from '../../../shared/cost-words.ts';

/**
 * An app's cost in words. An app may come without `tool_metadata.total_cost`: then the server
 * charges what the app costs and nobody here knows the figure, which is said, not shown as "null".
 */
export const UNKNOWN_COST = `C${COST_UNKNOWN.app.slice(1)}.`;

export const credits = (cost: number | null): string =>
  cost === null ? 'cost unknown' : `${cost} credit${cost === 1 ? '' : 's'}`;

/** The button that spends them: a figure when there is one. */
export const runFor = (verb: string, cost: number | null): string =>
  cost === null ? `${verb} (cost unknown)` : `${verb} for ${credits(cost)}`;
