import type { Component } from 'svelte';
import type { Field } from '../../../../shared/catalogue/index.ts';
import type { ControlEntry, ControlProps } from './control.ts';
import BoolControl from './BoolControl.svelte';
import EnumControl from './EnumControl.svelte';
import IntChoiceControl from './IntChoiceControl.svelte';
import JsonControl from './JsonControl.svelte';
import MediaControl from './MediaControl.svelte';
import MediaListControl from './MediaListControl.svelte';
import NumberControl from './NumberControl.svelte';
import ObjectControl from './ObjectControl.svelte';
import ShotsControl from './ShotsControl.svelte';
import StylingControl from './StylingControl.svelte';
import TextControl from './TextControl.svelte';
import UrlControl from './UrlControl.svelte';

/** Each catalogue field kind's control: a new kind is one entry here (TypeScript asks for it). */
export const CONTROLS: { [K in Field['kind']]: ControlEntry<K> } = {
  bool: { control: BoolControl, ownLabel: true },
  int: { control: NumberControl },
  number: { control: NumberControl },
  text: { control: TextControl },
  enum: { control: EnumControl },
  intChoice: { control: IntChoiceControl },
  url: { control: UrlControl },
  media: { control: MediaControl },
  mediaList: { control: MediaListControl },
  shots: { control: ShotsControl },
  styling: { control: StylingControl },
  object: { control: ObjectControl, ownLabel: true },
  json: { control: JsonControl },
};

/** The control for a field, typed for any field (the map pairs each kind with its own). */
export const controlOf = (f: Field) =>
  CONTROLS[f.kind] as ControlEntry<Field['kind']> as {
    control: Component<ControlProps>;
    ownLabel?: boolean;
  };
