import type { Component } from 'svelte';
import Settings from './Settings.svelte';

export interface Screen {
  id: string;
  label: string;
  /** One glyph for the collapsed sidebar; text labels are always present for screen readers. */
  glyph: string;
  component: Component;
}

/** The navigation, in order. An area adds its screen here. */
export const SCREENS: Screen[] = [
  { id: 'settings', label: 'Settings', glyph: '⚙', component: Settings },
];
