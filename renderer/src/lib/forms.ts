/**
 * Enter in a one-line field does not submit a form that starts paid work. HTML submits a form on
 * Enter in any text, number or checkbox input, so typing a seed and pressing Enter to "set" it
 * would start a batch of a whole folder. Submit stays one deliberate act: the button (clicked, or
 * Enter or Space on it). Fields with an Enter of their own (add a path, add a URL) still get it.
 * An action, as it delegates a key the fields receive: the form itself takes no keys.
 */
export function holdImplicitSubmit(form: HTMLFormElement): { destroy(): void } {
  const hold = (e: KeyboardEvent) => {
    if (e.key === 'Enter' && e.target instanceof HTMLInputElement) e.preventDefault();
  };
  form.addEventListener('keydown', hold);
  return { destroy: () => form.removeEventListener('keydown', hold) };
}
