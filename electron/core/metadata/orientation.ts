import type { Sharp } from 'sharp';
import { loadSharp } from '../../media/sharp.ts';

/** EXIF orientations that swap width and height when shown. */
const TURNS_SIDES = new Set([5, 6, 7, 8]);
const THUMB = 16;

/** A small grey picture, for telling which way a result's pixels face. */
const thumb = (img: Sharp) =>
  img.resize(THUMB, THUMB, { fit: 'fill' }).greyscale().raw().toBuffer({ resolveWithObject: false });

const distance = (a: Buffer, b: Buffer) => a.reduce((sum, v, i) => sum + Math.abs(v - b[i]), 0);
const ratioGap = (a: number, b: number) => Math.abs(Math.log(a) - Math.log(b));

/**
 * The orientation a result must carry to show the way its source shows: the source's own when the
 * service returned the pixels as stored, 1 when it turned them upright (copying the source's
 * would turn them a second time); null when the source carries none.
 */
export async function resultOrientation(source: string, result: string): Promise<number | null> {
  const sharp = await loadSharp();
  const s = await sharp(source).metadata();
  const orientation = s.orientation ?? 1;
  if (orientation === 1) return null;
  const r = await sharp(result).metadata();
  const stored = s.width / s.height;
  const got = r.width / r.height;
  if (TURNS_SIDES.has(orientation)) {
    const asStored = ratioGap(got, stored);
    const asShown = ratioGap(got, 1 / stored);
    // A clear difference of shape decides; a square (or nearly) source is told by its pixels.
    if (Math.abs(asStored - asShown) > 0.1) return asStored < asShown ? orientation : 1;
  }
  const [raw, upright, res] = await Promise.all([
    thumb(sharp(source)),
    thumb(sharp(source).rotate()),
    thumb(sharp(result)),
  ]);
  return distance(res, raw) <= distance(res, upright) ? orientation : 1;
}
