/** A 1×1 PNG. */
export const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a1b5f7d30000000049454e44ae426082',
  'hex',
)

/** A PNG of exactly `size` bytes (the signature and header of PNG, then padding). */
export function pngOfSize(size: number): Buffer {
  return Buffer.concat([PNG, Buffer.alloc(Math.max(0, size - PNG.length))]).subarray(0, size)
}

/** A multipart/form-data body, built by hand so the test controls every byte. */
export function multipart(
  fields: { name: string; filename?: string; type?: string; data: Buffer | string }[],
) {
  const boundary = '----petservice-test-boundary'
  const parts = fields.map((f) =>
    Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${f.name}"${f.filename === undefined ? '' : `; filename="${f.filename}"`}\r\n${f.type === undefined ? '' : `Content-Type: ${f.type}\r\n`}\r\n`,
      ),
      Buffer.isBuffer(f.data) ? f.data : Buffer.from(f.data),
      Buffer.from('\r\n'),
    ]),
  )
  return {
    payload: Buffer.concat([...parts, Buffer.from(`--${boundary}--\r\n`)]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  }
}
