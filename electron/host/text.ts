import { ignoredSettingText, type IgnoredSetting } from '../../shared/contract/foundation.ts';
import { oneLine } from './terminal-text.ts';

export { oneLine, terminalJson } from './terminal-text.ts';

/** A stored setting this build did not use, as `mediadesk settings get` and the web host say it on stderr. */
export const ignoredSettingNote = (i: IgnoredSetting): string => `note: ${oneLine(ignoredSettingText(i))}\n`;

/** Why the settings file could not be read (its JSON error may quote the file's own bytes), on one line. */
export const unreadableSettingsWarning = (unreadable: string, then: string): string =>
  `warning: ${oneLine(unreadable)}; ${then}\n`;
