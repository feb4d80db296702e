import type { Attachment } from 'svelte/attachments';

/**
 * While a height-capped box overflows it is a named region in the Tab order, so it scrolls from the
 * keyboard (axe's scrollable-region-focusable); one that fits stays a plain box. `content` is read
 * only so that new text in the same element measures again.
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
