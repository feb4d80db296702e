import type { Req, Res } from '../../shared/contract/index.ts';

/** The part of Electron's dialog.showOpenDialog that `files.choose` uses (plain, so it is tested without Electron). */
export type ShowOpenDialog = (options: {
  title?: string;
  properties: ('openFile' | 'openDirectory' | 'multiSelections')[];
}) => Promise<{ canceled: boolean; filePaths: string[] }>;

/**
 * `files.choose`, served by main alone: the system's open dialog, whose answer comes from the person,
 * not the page, so each path chosen is granted (PathPolicy.grant) before the page hears of it.
 */
export function chooseFiles(show: ShowOpenDialog, grant: (path: string) => void) {
  return async ({ kind, title }: Req<'files.choose'>): Promise<Res<'files.choose'>> => {
    const chosen = await show({
      title: title ?? (kind === 'folder' ? 'Choose a folder' : 'Choose files'),
      properties: kind === 'folder' ? ['openDirectory'] : ['openFile', 'multiSelections'],
    });
    const paths = chosen.canceled ? [] : chosen.filePaths;
    for (const p of paths) grant(p);
    return { paths };
  };
}
