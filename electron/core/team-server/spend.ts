import type { PoolClient } from 'pg';
import type { TeamToday } from '../../../shared/contract/jobs.ts';
import type { ProjectBudget, TeamSpend } from '../../../shared/contract/team-server.ts';
import { projectToday } from './pacing.ts';

/** The team's budget of credits a day (null: none) and what every machine spent on `day`. */
export async function teamDay(
  c: PoolClient,
  day: string,
): Promise<{ creditsPerDay: number | null; spentToday: number }> {
  const r = await c.query<{ credits: string | null; spent: string }>(
    `SELECT (SELECT credits FROM mediadesk.budgets WHERE name = 'day') AS credits,
            (SELECT coalesce(sum(credits), 0) FROM mediadesk.spend WHERE day = $1) AS spent`,
    [day],
  );
  const row = r.rows[0];
  return { creditsPerDay: row.credits === null ? null : Number(row.credits), spentToday: Number(row.spent) };
}

/** Projects with a budget, or spent on `day`: each with both. */
export async function projectBudgets(c: PoolClient, day: string): Promise<ProjectBudget[]> {
  const r = await c.query<{ project: string; credits: string | null; spent: string }>(
    `SELECT p.project, b.credits, coalesce(s.spent, 0) AS spent
       FROM (SELECT project FROM mediadesk.project_budgets
             UNION SELECT project FROM mediadesk.project_spend WHERE day = $1 AND project <> '') AS p
       LEFT JOIN mediadesk.project_budgets b ON b.project = p.project
       LEFT JOIN (SELECT project, sum(credits) AS spent FROM mediadesk.project_spend WHERE day = $1 GROUP BY project) s
         ON s.project = p.project
      ORDER BY p.project`,
    [day],
  );
  return r.rows.map((x) => ({
    project: x.project,
    creditsPerDay: x.credits === null ? null : Number(x.credits),
    spentToday: Number(x.spent),
  }));
}

/** Sets or removes (null) a project's budget of credits a day. */
export async function setProjectBudget(
  c: PoolClient,
  project: string,
  creditsPerDay: number | null,
  by: string,
): Promise<void> {
  if (creditsPerDay === null) await c.query('DELETE FROM mediadesk.project_budgets WHERE project = $1', [project]);
  else
    await c.query(
      `INSERT INTO mediadesk.project_budgets (project, credits, set_at, set_by) VALUES ($1, $2, $3, $4)
       ON CONFLICT (project) DO UPDATE SET credits = $2, set_at = $3, set_by = $4`,
      [project, creditsPerDay, Date.now(), by],
    );
}

/** What the team spent today and what is left of its budget and the project's, for the estimate before Start. */
export async function teamToday(c: PoolClient, day: string, project: string | null): Promise<TeamToday> {
  const team = await teamDay(c, day);
  const left = (budget: number | null, spent: number) => (budget === null ? null : Math.max(0, budget - spent));
  let p: TeamToday['project'] = null;
  if (project) {
    const { budget, spent } = await projectToday(c, project, day);
    p = { name: project, budget, spentToday: spent, left: left(budget, spent) };
  }
  return {
    reachable: true,
    why: null,
    spentToday: team.spentToday,
    budget: team.creditsPerDay,
    left: left(team.creditsPerDay, team.spentToday),
    project: p,
  };
}

/**
 * The studio's spend on `days` per machine (host and data folder, the names the machines table
 * keeps; a process is a machine there, so one folder's processes add up) and per project.
 */
export async function teamSpend(c: PoolClient, days: string[]): Promise<TeamSpend> {
  const byMachine = await c.query<{ name: string; credits: string; creates: string }>(
    `SELECT coalesce(m.name, s.machine) AS name, sum(s.credits) AS credits, sum(s.creates) AS creates
       FROM mediadesk.spend s LEFT JOIN mediadesk.machines m ON m.id = s.machine
      WHERE s.day = ANY($1::text[]) GROUP BY 1 ORDER BY 2 DESC, 1`,
    [days],
  );
  const byProject = await c.query<{ name: string; credits: string; creates: string }>(
    `SELECT project AS name, sum(credits) AS credits, sum(creates) AS creates FROM mediadesk.project_spend
      WHERE day = ANY($1::text[]) GROUP BY 1 ORDER BY 2 DESC, 1`,
    [days],
  );
  const rows = (r: typeof byMachine) =>
    r.rows.map((x) => ({ name: x.name, credits: Number(x.credits), creates: Number(x.creates) }));
  const machines = rows(byMachine);
  return {
    days,
    reachable: true,
    why: null,
    credits: machines.reduce((a, m) => a + m.credits, 0),
    creates: machines.reduce((a, m) => a + m.creates, 0),
    byMachine: machines,
    byProject: rows(byProject),
  };
}
