/**
 * Enter in a one-line field does not submit a form that starts paid work: HTML would, so a seed typed
 * and "set" with Enter started a whole folder's batch. Fields with an Enter of their own keep it.
 */
export function holdImplicitSubmit(form: HTMLFormElement): { destroy(): void } {
  const hold = (e: KeyboardEvent) => {
    if (e.key === 'Enter' && e.target instanceof HTMLInputElement) e.preventDefault();
  };
  form.addEventListener('keydown', hold);
  return { destroy: () => form.removeEventListener('keydown', hold) };
}
