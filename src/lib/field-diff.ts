/**
 * The fields of an update that would change a stored object, with their previous values: the
 * one comparison behind every versioned update (pets and users alike). A field left undefined is
 * not part of the update; values compare by their JSON text, so lists and objects (photo URLs,
 * tags, a category) compare by content, and `null` clears.
 */
export function fieldChanges<T extends object>(
  current: T,
  fields: Partial<T>,
  keys: readonly (keyof T)[],
): { changes: Partial<T>; previous: Partial<T> } {
  const changes: Partial<T> = {}
  const previous: Partial<T> = {}
  for (const key of keys) {
    const next = fields[key]
    if (next === undefined) continue
    if (JSON.stringify(next) === JSON.stringify(current[key])) continue
    changes[key] = next
    previous[key] = current[key]
  }
  return { changes, previous }
}
