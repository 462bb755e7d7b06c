/** What an uploaded pet image is: its accepted types, its name, and where its URL points. */

export interface ImageType {
  ext: string
  mime: string
  test: (data: Buffer) => boolean
}

/** Recognised by their first bytes (the file's own claim, its name or part type, is not trusted). */
export const IMAGE_TYPES: readonly ImageType[] = [
  { ext: 'jpg', mime: 'image/jpeg', test: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  {
    ext: 'png',
    mime: 'image/png',
    test: (b) => b.subarray(0, 8).equals(Buffer.from('89504e470d0a1a0a', 'hex')),
  },
  { ext: 'gif', mime: 'image/gif', test: (b) => /^GIF8[79]a$/.test(b.subarray(0, 6).toString('latin1')) },
  {
    ext: 'webp',
    mime: 'image/webp',
    test: (b) =>
      b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
  },
]

/** `{petId}-{12 random bytes, base64url}.{ext}`: the last segment of an image's URL. */
export const IMAGE_NAME_PATTERN = '^[0-9]+-[A-Za-z0-9_-]{16}\\.(jpg|png|gif|webp)$'
const IMAGE_NAME = new RegExp(IMAGE_NAME_PATTERN)

export function isImageName(name: string): boolean {
  return IMAGE_NAME.test(name)
}

export function imageTypeOf(data: Buffer): ImageType | undefined {
  return IMAGE_TYPES.find((type) => type.test(data))
}

export function imageUrl(publicUrl: string, name: string): string {
  return `${publicUrl}/v2/images/${name}`
}

/**
 * The names of our images that photo URLs point at. Only the path counts, not the origin: the
 * same image stays listed when PUBLIC_URL changes or a client rewrites the host.
 */
export function imageNamesIn(photoUrls: readonly string[]): string[] {
  const names: string[] = []
  for (const url of photoUrls) {
    const name = /\/v2\/images\/([^/?#]+)$/.exec(url)?.[1]
    if (name !== undefined && isImageName(name)) names.push(name)
  }
  return names
}
