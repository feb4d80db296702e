/** The EXIF block (TIFF) copied from a source into a result, and the XMP packet of our provenance: the in-process writer's payloads. */

// --- EXIF (a TIFF block) ---

const TYPE_SIZES = [0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8, 4];
const ORIENTATION = 0x0112;
const EXIF_IFD = 0x8769;
const GPS_IFD = 0x8825;
const INTEROP_IFD = 0xa005;
const MAKER_NOTE = 0x927c;
/** The source's own pixel size in its EXIF: not the result's. */
const EXIF_SIZE = new Set([0xa002, 0xa003]);
/** IFD0 tags of an image's layout (a TIFF's strips or tiles): their values point at pixels that are not copied. */
const LAYOUT = new Set([
  0x100, 0x101, 0x102, 0x103, 0x106, 0x111, 0x115, 0x116, 0x117, 0x11c, 0x142, 0x143, 0x144, 0x145, 0x14a,
]);

/**
 * The source's EXIF as the result carries it: without its thumbnail (IFD1), its pixel size and its
 * orientation (set to `orientation` when given), every other tag (maker notes too) as it was,
 * their offsets untouched. Null when the block is not one this can edit in place.
 */
export function exifForResult(source: Buffer, orientation: number | null): Buffer | null {
  if (source.length < 8) return null;
  const tiff = Buffer.from(source);
  const le = tiff.toString('latin1', 0, 2) === 'II';
  if (!le && tiff.toString('latin1', 0, 2) !== 'MM') return null;
  const u16 = (o: number) => (le ? tiff.readUInt16LE(o) : tiff.readUInt16BE(o));
  const u32 = (o: number) => (le ? tiff.readUInt32LE(o) : tiff.readUInt32BE(o));
  const w16 = (v: number, o: number) => (le ? tiff.writeUInt16LE(v, o) : tiff.writeUInt16BE(v, o));
  const w32 = (v: number, o: number) => (le ? tiff.writeUInt32LE(v, o) : tiff.writeUInt32BE(v, o));
  if (u16(2) !== 42) return null;

  interface Entry {
    tag: number;
    at: number;
    type: number;
    count: number;
  }
  /** An IFD's entries; every byte they reference (the IFD itself, values stored apart) added to `used`. */
  const readIfd = (at: number, used: [number, number][]): { entries: Entry[]; next: number } | null => {
    if (at + 2 > tiff.length) return null;
    const n = u16(at);
    const end = at + 2 + 12 * n + 4;
    if (end > tiff.length) return null;
    used.push([at, end]);
    const entries: Entry[] = [];
    for (let i = 0; i < n; i++) {
      const e = at + 2 + 12 * i;
      const type = u16(e + 2);
      const count = u32(e + 4);
      if (!TYPE_SIZES[type]) return null;
      const size = TYPE_SIZES[type] * count;
      if (size > 4) {
        const value = u32(e + 8);
        if (value + size > tiff.length) return null;
        used.push([value, value + size]);
      }
      entries.push({ tag: u16(e), at: e, type, count });
    }
    return { entries, next: u32(end - 4) };
  };
  /** Removes an entry in place: the later ones and the next-IFD link move up, the freed bytes zeroed. */
  const remove = (ifd: number, entry: Entry) => {
    const n = u16(ifd);
    const tail = ifd + 2 + 12 * n + 4;
    tiff.copy(tiff, entry.at, entry.at + 12, tail);
    tiff.fill(0, tail - 12, tail);
    w16(n - 1, ifd);
  };

  const kept: [number, number][] = [[0, 8]];
  const ifd0At = u32(4);
  const ifd0 = readIfd(ifd0At, kept);
  if (!ifd0 || ifd0.entries.some((e) => LAYOUT.has(e.tag))) return null;
  const pointer = (entries: Entry[], tag: number) => {
    const e = entries.find((x) => x.tag === tag);
    return e && (e.type === 4 || e.type === 13) && e.count === 1 ? u32(e.at + 8) : null;
  };
  const exifAt = pointer(ifd0.entries, EXIF_IFD);
  const exif = exifAt !== null ? readIfd(exifAt, kept) : null;
  if (exifAt !== null && !exif) return null;
  const gpsAt = pointer(ifd0.entries, GPS_IFD);
  if (gpsAt !== null && !readIfd(gpsAt, kept)) return null;
  const interopAt = exif ? pointer(exif.entries, INTEROP_IFD) : null;
  if (interopAt !== null && !readIfd(interopAt, kept)) return null;

  // The thumbnail's IFD and its picture: unlinked, then cut off the end or zeroed where they are.
  const thumb: [number, number][] = [];
  if (ifd0.next) {
    const ifd1 = readIfd(ifd0.next, thumb);
    if (!ifd1) return null;
    const offset = pointer(ifd1.entries, 0x201);
    const length = ifd1.entries.find((e) => e.tag === 0x202);
    if (offset !== null && length) {
      const bytes = length.type === 3 ? u16(length.at + 8) : u32(length.at + 8);
      if (offset + bytes > tiff.length) return null;
      thumb.push([offset, offset + bytes]);
    }
    w32(0, ifd0At + 2 + 12 * ifd0.entries.length);
  }
  if (thumb.some(([a, b]) => kept.some(([c, d]) => a < d && c < b))) return null;

  const orientationEntry = ifd0.entries.find((e) => e.tag === ORIENTATION);
  if (orientation !== null) {
    if (!orientationEntry || orientationEntry.type !== 3 || orientationEntry.count !== 1) return null;
    w16(orientation, orientationEntry.at + 8);
  }
  // Removed last to first, so each entry's place is still where it was read.
  if (exif && exifAt !== null)
    for (const e of exif.entries.filter((x) => EXIF_SIZE.has(x.tag)).reverse()) remove(exifAt, e);
  if (orientation === null && orientationEntry) remove(ifd0At, orientationEntry);

  // A maker note may point past its own bytes: only without one is the end known to be free.
  const hasMakerNote = exif?.entries.some((e) => e.tag === MAKER_NOTE) ?? false;
  const keptEnd = Math.max(...kept.map(([, b]) => b));
  if (!hasMakerNote && thumb.every(([a]) => a >= keptEnd)) return tiff.subarray(0, keptEnd);
  for (const [a, b] of thumb) tiff.fill(0, a, b);
  return tiff;
}

// --- XMP ---

const XML_INVALID = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/;
const xmlText = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/\r/g, '&#13;');

/**
 * An XMP packet of `tags` (`XMP-<prefix>:<Name>` → value; empty values left out, as exiftool
 * does), each prefix declared by `namespaces`. Null when a value cannot be XML text.
 */
export function xmpPacket(tags: Record<string, string>, namespaces: Record<string, string>): string | null {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(tags)) {
    const m = /^XMP-([A-Za-z][\w-]*):([A-Za-z][\w-]*)$/.exec(key);
    if (!m || !namespaces[m[1]] || XML_INVALID.test(value)) return null;
    if (value !== '') lines.push(`  <${m[1]}:${m[2]}>${xmlText(value)}</${m[1]}:${m[2]}>`);
  }
  const declared = Object.entries(namespaces)
    .map(([prefix, uri]) => `\n  xmlns:${prefix}='${xmlText(uri)}'`)
    .join('');
  return [
    `<?xpacket begin='\ufeff' id='W5M0MpCehiHzreSzNTczkc9d'?>`,
    `<x:xmpmeta xmlns:x='adobe:ns:meta/'>`,
    `<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>`,
    ` <rdf:Description rdf:about=''${declared}>`,
    ...lines,
    ` </rdf:Description>`,
    `</rdf:RDF>`,
    `</x:xmpmeta>`,
    `<?xpacket end='w'?>`,
  ].join('\n');
}

/** The orientation in a TIFF block's IFD0, 1 when it names none. */
export function orientationIn(tiff: Buffer): number {
  if (tiff.length < 8) return 1;
  const le = tiff[0] === 0x49;
  const u16 = (o: number) => (le ? tiff.readUInt16LE(o) : tiff.readUInt16BE(o));
  const at = le ? tiff.readUInt32LE(4) : tiff.readUInt32BE(4);
  if (at + 2 > tiff.length) return 1;
  for (let i = 0, n = u16(at); i < n && at + 14 + 12 * i <= tiff.length; i++) {
    const e = at + 2 + 12 * i;
    if (u16(e) === ORIENTATION && u16(e + 2) === 3) return u16(e + 8);
  }
  return 1;
}
