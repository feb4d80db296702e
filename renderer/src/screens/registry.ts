import type { Component } from 'svelte';
import Settings from './Settings.svelte';
import Audit from './Audit.svelte';
import Studio from './Studio.svelte';
import Queue from './Queue.svelte';
import Results from './Results.svelte';
import Loras from './Loras.svelte';
import Video from './Video.svelte';
import Music from './Music.svelte';
import Apps from './Apps.svelte';
import Analytics from './Analytics.svelte';
import Creations from './Creations.svelte';
import HotFolders from './HotFolders.svelte';
import Compare from './Compare.svelte';

export interface Screen {
  id: string;
  label: string;
  /** One glyph for the collapsed sidebar; text labels are always present for screen readers. */
  glyph: string;
  component: Component;
}

/** The navigation, in order. An area adds its screen here. */
export const SCREENS: Screen[] = [
  { id: 'studio', label: 'Image Studio', glyph: '◧', component: Studio },
  { id: 'queue', label: 'Queue', glyph: '☰', component: Queue },
  { id: 'results', label: 'Results', glyph: '▦', component: Results },
  { id: 'compare', label: 'Compare', glyph: '◨', component: Compare },
  { id: 'hot-folders', label: 'Hot folders', glyph: '◫', component: HotFolders },
  { id: 'loras', label: 'LoRAs', glyph: '✦', component: Loras },
  { id: 'video', label: 'Video', glyph: '▶', component: Video },
  { id: 'music', label: 'Music', glyph: '♪', component: Music },
  { id: 'apps', label: 'Workflow apps', glyph: '⚡', component: Apps },
  { id: 'analytics', label: 'Team analytics', glyph: '◔', component: Analytics },
  { id: 'creations', label: 'Recent creations', glyph: '▤', component: Creations },
  { id: 'audit', label: 'Audit log', glyph: '§', component: Audit },
  { id: 'settings', label: 'Settings', glyph: '⚙', component: Settings },
];
