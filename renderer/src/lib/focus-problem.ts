import { tick } from 'svelte';

/**
 * After a refused submit, focuses the first invalid field in `scope`, once the render that marks the
 * fields has landed. With no marked control (a whole list's error), scrolls to the first message.
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
