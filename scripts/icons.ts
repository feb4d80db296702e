/**
 * Renders every platform's app icon from the one source image, resources/icon.svg, into build/:
 * icon.icns (macOS), icon.ico (Windows installer and exe) and icons/NxN.png (Linux). Run by
 * `npm run package` before electron-builder; build/ is generated, never committed.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import png2icons from 'png2icons';
import sharp from 'sharp';

export const ICON_SOURCE = join(import.meta.dirname, '..', 'resources', 'icon.svg');
export const LINUX_ICON_SIZES = [16, 32, 48, 64, 128, 256, 512, 1024];

export async function renderIcons(outDir: string, source = ICON_SOURCE): Promise<string[]> {
  const svg = readFileSync(source);
  const png = (size: number) =>
    sharp(svg, { density: 72 * Math.ceil(size / 64) })
      .resize(size, size)
      .png()
      .toBuffer();
  mkdirSync(join(outDir, 'icons'), { recursive: true });
  const written: string[] = [];
  const write = (name: string, data: Buffer) => {
    writeFileSync(join(outDir, name), data);
    written.push(name);
  };
  for (const size of LINUX_ICON_SIZES) write(join('icons', `${size}x${size}.png`), await png(size));
  const large = await png(1024);
  write('icon.png', large);
  const icns = png2icons.createICNS(large, png2icons.BICUBIC, 0);
  const ico = png2icons.createICO(await png(256), png2icons.BICUBIC, 0, true, true);
  if (!icns || !ico) throw new Error(`could not make .icns or .ico from ${source}`);
  write('icon.icns', icns);
  write('icon.ico', ico);
  return written;
}

if (import.meta.main) {
  const outDir = join(import.meta.dirname, '..', 'build');
  const written = await renderIcons(outDir);
  console.log(`icons: ${written.length} files in ${outDir} from ${ICON_SOURCE}`);
}
