import { desk } from './bridge.ts';

const ON_HOST = {
  folder: 'Opens in the file manager of the computer running MediaDesk',
  file: 'Opens on the computer running MediaDesk',
};

/** In a browser, Open acts on the computer running MediaDesk, not the browser's: said on each such button. */
export const onHostTitle = (what: keyof typeof ON_HOST): string | undefined =>
  desk.download ? ON_HOST[what] : undefined;
