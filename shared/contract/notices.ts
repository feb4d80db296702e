import { z } from 'zod';

/** Where a notice leads when clicked: the Queue (on its batch), Workflow apps or Hot folders. */
export const NOTICE_SCREENS = ['queue', 'apps', 'hot-folders'] as const;

export const noticeSchema = z.object({
  /** Names the end it tells of: the core tells each key once (electron/core/notices). */
  key: z.string(),
  /** The whole news in one line: "Precision upscaler: 20 images done". */
  title: z.string(),
  body: z.string(),
  screen: z.enum(NOTICE_SCREENS),
  batchId: z.string().nullable(),
});
export type Notice = z.infer<typeof noticeSchema>;

export const noticesEvents = {
  /** Work ended or needs the person; each host shows them as system notifications (setting `notifications`). */
  'notices.show': z.object({ notices: z.array(noticeSchema) }),
};
