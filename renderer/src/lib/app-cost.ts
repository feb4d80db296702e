/**
 * An app's cost in words. An app may come without `tool_metadata.total_cost`: then the server
 * charges what the app costs and nobody here knows the figure, which is said, not shown as "null".
 */
export const UNKNOWN_COST = 'Cost unknown: the server will charge what this app costs.';

export const credits = (cost: number | null): string =>
  cost === null ? 'cost unknown' : `${cost} credit${cost === 1 ? '' : 's'}`;

/** The button that spends them: a figure when there is one. */
export const runFor = (verb: string, cost: number | null): string =>
  cost === null ? `${verb} (cost unknown)` : `${verb} for ${credits(cost)}`;
