import { Readable } from 'node:stream'

/**
 * A byte stream that takes the next chunk from `chunks` only when its reader asks for more:
 * piped to a slow client, it holds the one chunk being written, never a second read ahead
 * (`Readable.from` reads on while its first chunk is still being written).
 */
export function pulledStream(chunks: AsyncIterator<Buffer>): Readable {
  return new Readable({
    highWaterMark: 0,
    read() {
      chunks.next().then(
        ({ value, done }) => this.push(done === true ? null : value),
        (error: unknown) => this.destroy(error instanceof Error ? error : new Error(String(error))),
      )
    },
    destroy(error, callback) {
      // Stops the source (a generator reading the database) when the client goes away.
      chunks.return?.().then(
        () => callback(error),
        () => callback(error),
      )
    },
  })
}
