import type { Attachment } from 'svelte/attachments';

/**
 * For a box whose height CSS caps (max-height, overflow auto): while its content overflows it
 * is a named region that takes focus, so it scrolls from the keyboard and a screen reader says
 * what it is (axe's scrollable-region-focusable); a value that fits stays a plain box out of the
 * Tab order. The box must be an element that may be named (a div, not a dd). `content` is only
 * read so that new text in the same element measures again.
 */
export function focusableWhenScrolling(label: string, content: unknown): Attachment<HTMLElement> {
  void content;
  return (el) => {
    const measure = () => {
      if (el.scrollHeight > el.clientHeight + 1) {
        el.tabIndex = 0;
        el.setAttribute('role', 'region');
        el.setAttribute('aria-label', label);
      } else {
        el.removeAttribute('tabindex');
        el.removeAttribute('role');
        el.removeAttribute('aria-label');
      }
    };
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    measure();
    return () => ro.disconnect();
  };
}
