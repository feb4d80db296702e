/**
 * "Use as input": a creation chosen on the Creations screen waits here for the screen that takes
 * it (an app's creation input, or a tool as a downloaded file). Screens switch through the nav.
 */
export const handoff = $state<{ creationId: string | null; name: string; path: string | null }>({ creationId: null, name: '', path: null });

export function goTo(screen: string): void {
  document.getElementById(`nav-${screen}`)?.click();
}
