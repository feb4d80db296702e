import { tick } from 'svelte';

/**
 * After a refused submit, takes the keyboard to the first field marked invalid inside `scope`.
 * Fields are marked only once the render that follows `attempted = true` lands ("is required"
 * waits for a first submit), so the query waits for it: run at once it found nothing, and focus
 * stayed on the Submit button with the error out of sight. Where no control is marked (an error
 * of a whole reference list), the first message is scrolled into view instead.
 */
export async function focusFirstProblem(scope: string): Promise<void> {
  await tick();
  const field = document.querySelector<HTMLElement>(`${scope} [aria-invalid="true"]`);
  if (field) {
    field.focus();
    field.scrollIntoView({ block: 'center' });
    return;
  }
  document.querySelector<HTMLElement>(`${scope} .field-error`)?.scrollIntoView({ block: 'center' });
}
