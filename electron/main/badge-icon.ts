import { nativeImage, type NativeImage } from 'electron';

/** A 16 px square in the app's accent colour, drawn in code: the tray's icon and a drag's fallback image. */
export function badgeIcon(): NativeImage {
  const size = 16;
  const pixels = Buffer.alloc(size * size * 4);
  for (let y = 0; y < size; y++)
    for (let x = 0; x < size; x++) {
      const corner = (x < 2 || x > 13) && (y < 2 || y > 13);
      // BGRA
      pixels.set(corner ? [0, 0, 0, 0] : [0xe8, 0x8a, 0x4c, 0xff], (y * size + x) * 4);
    }
  return nativeImage.createFromBitmap(pixels, { width: size, height: size });
}
