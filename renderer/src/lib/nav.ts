/**
 * Switches screens from inside a screen. The shell (App.svelte) owns navigation and exposes it
 * only through its nav buttons, so pressing the button keeps its state (aria-current, hash) right.
 */
export function navigate(id: string) {
  document.getElementById(`nav-${id}`)?.click();
}
