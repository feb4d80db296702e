import type { Component } from 'svelte';
import Studio from './Studio.svelte';

export interface Screen {
  id: string;
  label: string;
  /** One glyph for the collapsed sidebar; text labels are always present for screen readers. */
  glyph: string;
  /** The screen's code: the Studio, where the app opens, comes with the page; the rest load when first shown. */
  load: () => Promise<Component>;
}

const first = (c: Component) => () => Promise.resolve(c);
const later =
  (load: () => Promise<{ default: Component }>): Screen['load'] =>
  () =>
    load().then((m) => m.default);

/** The navigation, in order. An area adds its screen here. */
export const SCREENS: Screen[] = [
  { id: 'studio', label: 'Image Studio', glyph: '◧', load: first(Studio) },
  { id: 'queue', label: 'Queue', glyph: '☰', load: later(() => import('./Queue.svelte')) },
  { id: 'results', label: 'Results', glyph: '▦', load: later(() => import('./Results.svelte')) },
  { id: 'compare', label: 'Compare', glyph: '◨', load: later(() => import('./Compare.svelte')) },
  { id: 'hot-folders', label: 'Hot folders', glyph: '◫', load: later(() => import('./HotFolders.svelte')) },
  { id: 'loras', label: 'LoRAs', glyph: '✦', load: later(() => import('./Loras.svelte')) },
  { id: 'video', label: 'Video', glyph: '▶', load: later(() => import('./Video.svelte')) },
  { id: 'music', label: 'Music', glyph: '♪', load: later(() => import('./Music.svelte')) },
  { id: 'apps', label: 'Workflow apps', glyph: '⚡', load: later(() => import('./Apps.svelte')) },
  { id: 'analytics', label: 'Team analytics', glyph: '◔', load: later(() => import('./Analytics.svelte')) },
  { id: 'creations', label: 'Recent creations', glyph: '▤', load: later(() => import('./Creations.svelte')) },
  { id: 'audit', label: 'Audit log', glyph: '§', load: later(() => import('./Audit.svelte')) },
  { id: 'settings', label: 'Settings', glyph: '⚙', load: later(() => import('./Settings.svelte')) },
];
