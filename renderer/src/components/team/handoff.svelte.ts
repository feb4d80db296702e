/**
 * "Use in app": a creation chosen on the Creations screen waits here for the Apps screen's
 * creation input. ("Use in tool" adds the downloaded file to the Studio's inputs directly.)
 */
export const handoff = $state<{ creationId: string | null }>({ creationId: null });

export function goTo(screen: string): void {
  location.hash = `#${screen}`;
}
