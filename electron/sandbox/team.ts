import { intBetween, pick, rngFrom, seedOf } from './rng.ts';

/**
 * The seeded enterprise team (team 1): one directory that the audit trail, the team listings and
 * the credit usage all describe, so ids seen in one endpoint resolve in the others.
 */
export interface Member {
  id: number;
  name: string;
  email: string;
  role: 'owner' | 'admin' | 'member';
  status: 'active' | 'invited' | 'suspended';
  groupId: number;
}
export interface Group {
  id: number;
  name: string;
}
export interface Project {
  reference: string;
  name: string;
}
export interface Folder {
  reference: string;
  name: string;
  projectReference: string;
}
export interface ApiKey {
  id: number;
  name: string;
  status: 'active' | 'revoked';
  ownerId: number;
  createdAt: string;
}

export interface Team {
  members: Member[];
  groups: Group[];
  projects: Project[];
  folders: Folder[];
  apiKeys: ApiKey[];
}

const FIRST = [
  'Ada',
  'Bruno',
  'Chloe',
  'Dmitri',
  'Esme',
  'Farid',
  'Greta',
  'Hugo',
  'Ines',
  'Jonas',
  'Kaia',
  'Luca',
  'Mira',
  'Noah',
  'Olga',
  'Pablo',
  'Quinn',
  'Rosa',
  'Sami',
  'Tess',
];
const LAST = [
  'Novak',
  'Berg',
  'Silva',
  'Ito',
  'Okafor',
  'Moreau',
  'Kowalski',
  'Lind',
  'Haddad',
  'Rossi',
  'Meyer',
  'Park',
];
const GROUPS = ['Design', 'Marketing', 'Video', 'Product', 'Brand', 'Social', 'Photo', 'Research'];
const PROJECTS = [
  'Spring campaign',
  'Catalogue 2025',
  'Onboarding videos',
  'Website refresh',
  'Podcast art',
  'Retail displays',
  'Event teasers',
  'Lookbook',
  'Packaging',
  'Investor deck',
  'Help centre',
  'Recruiting',
];
const FOLDERS = ['Drafts', 'Approved', 'Hero shots', 'Variants', 'Archive', 'Review'];

export const MEMBER_COUNT = 60;

export function buildTeam(seed: number): Team {
  const rng = rngFrom(seedOf(seed, 'team'));
  const groups: Group[] = GROUPS.map((name, i) => ({ id: 101 + i, name }));
  const fixed = [
    { name: 'Olivia Owner', email: 'owner@sandbox.test', role: 'owner' as const },
    { name: 'Adam Admin', email: 'admin@sandbox.test', role: 'admin' as const },
    { name: 'Mia Member', email: 'member@sandbox.test', role: 'member' as const },
  ];
  const members: Member[] = [];
  for (let id = 1; id <= MEMBER_COUNT; id++) {
    const f = fixed[id - 1];
    const first = pick(rng, FIRST);
    const last = pick(rng, LAST);
    members.push({
      id,
      name: f?.name ?? `${first} ${last}`,
      email: f?.email ?? `${first}.${last}.${id}@sandbox.test`.toLowerCase(),
      role: f?.role ?? (rng() < 0.1 ? 'admin' : 'member'),
      status: f ? 'active' : randomStatus(rng),
      groupId: groups[(id - 1) % groups.length].id,
    });
  }
  const projects: Project[] = PROJECTS.map((name, i) => ({
    reference: `prj_${(1000 + i * 37).toString(36)}${i}`,
    name,
  }));
  const folders: Folder[] = [];
  for (const p of projects) {
    for (let j = 0; j < 4; j++) {
      const name = FOLDERS[(j + intBetween(rng, 0, FOLDERS.length - 1)) % FOLDERS.length];
      folders.push({
        reference: `fld_${p.reference.slice(4)}_${j}`,
        name: `${p.name} / ${name}`,
        projectReference: p.reference,
      });
    }
  }
  const apiKeys: ApiKey[] = Array.from({ length: 10 }, (_, i) => ({
    id: 9001 + i,
    name: [
      'CI pipeline',
      'Desktop app',
      'Batch exports',
      'Website',
      'Zapier',
      'Staging',
      'Render farm',
      'Old integration',
      'Data team',
      'Mobile',
    ][i],
    status: i === 7 ? ('revoked' as const) : ('active' as const),
    ownerId: 1 + (i % 6),
    createdAt: new Date(Date.UTC(2024, i, 3 + i)).toISOString(),
  }));
  return { members, groups, projects, folders, apiKeys };
}

/** Most members are active; of the rest, half invited and half suspended. */
function randomStatus(rng: () => number): Member['status'] {
  if (rng() < 0.9) return 'active';
  return rng() < 0.5 ? 'invited' : 'suspended';
}
