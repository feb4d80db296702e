/**
 * A file put on a Sandbox as a client of the service would: request-url (with a demo key), then a
 * PUT to the signed URL with its headers and no key. `id` is the file id (`upl_vid_` for videos),
 * `url` the public asset URL a URL field takes.
 */
export async function uploadTo(
  baseUrl: string,
  bytes: Uint8Array,
  contentType: string,
  key = 'sandbox-owner',
): Promise<{ id: string; url: string }> {
  const asked = await fetch(`${baseUrl}/v1/ai/uploads/request-url`, {
    method: 'POST',
    headers: { 'x-magnific-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ files: [{ content_type: contentType }] }),
  });
  if (!asked.ok) throw new Error(`request-url: HTTP ${asked.status} ${await asked.text()}`);
  const [f] = (
    (await asked.json()) as {
      files: { file_id: string; upload_url: string; asset_url: string; headers: Record<string, string> }[];
    }
  ).files;
  const put = await fetch(f.upload_url, { method: 'PUT', headers: f.headers, body: new Uint8Array(bytes) });
  if (!put.ok) throw new Error(`PUT: HTTP ${put.status} ${await put.text()}`);
  return { id: f.file_id, url: f.asset_url };
}
