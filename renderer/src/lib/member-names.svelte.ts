import { SvelteMap } from 'svelte/reactivity';
import { call } from './bridge.ts';

/**
 * Team members' names by user id, from the team's directory (asked once): an event or usage row
 * that names a member only by id shows who it is. A key without team rights leaves the names out.
 */
class MemberNames {
  private names = new SvelteMap<number, string>();
  private asked = false;

  load(): void {
    if (this.asked) return;
    this.asked = true;
    call('team.directory', {})
      .then((d) => {
        for (const m of d.members) if (m.id !== null) this.names.set(m.id, m.name || m.email);
      })
      .catch(() => {});
  }

  /** "Ana Pérez", "Ana Pérez (API key)"; "member 36" while or when the directory does not say. */
  label(id: number, actorType: string | null = null): string {
    this.load();
    const name = this.names.get(id) ?? `member ${id}`;
    return actorType === 'api_key' ? `${name} (API key)` : name;
  }
}

export const memberNames = new MemberNames();
