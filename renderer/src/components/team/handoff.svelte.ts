import { SvelteMap } from 'svelte/reactivity';
import type { Creation } from '../../../../shared/contract/team.ts';

/**
 * "Use in app": a creation chosen on the Creations screen waits here for the Apps screen's
 * creation input. ("Use in tool" adds the downloaded file to the Studio's inputs directly.)
 */
export const handoff = $state<{ creationId: string | null }>({ creationId: null });

/** Creations seen on screen, by id: an app input holding one's id shows its name and picture instead. */
export const seenCreations = new SvelteMap<string, Creation>();

export function goTo(screen: string): void {
  location.hash = `#${screen}`;
}
