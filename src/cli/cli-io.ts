import { createInterface } from 'node:readline'
import { Writable } from 'node:stream'

/** Where a command writes and reads: the process's streams, or a test's. */
export interface CliIo {
  out(line: string): void
  err(line: string): void
  stdin: NodeJS.ReadableStream & { isTTY?: boolean }
}

export const processIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  stdin: process.stdin,
}

/** A mistake on the command line: exit status 2, the message only. */
export class UsageError extends Error {}

/**
 * A password: typed on a terminal (not echoed, asked twice), or the first line of standard
 * input when that is a pipe or a file (`… set-password --email E < password.txt`).
 */
export async function readPassword(io: CliIo, prompt: string): Promise<string> {
  if (io.stdin.isTTY !== true) return firstLine(io.stdin)
  const first = await askHidden(io, prompt)
  const again = await askHidden(io, 'Repeat it: ')
  if (first !== again) throw new UsageError('The two passwords differ; nothing changed.')
  return first
}

function firstLine(input: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input, terminal: false })
    let answered = false
    lines.once('line', (line) => {
      answered = true
      lines.close()
      resolve(line)
    })
    lines.once('close', () => {
      if (!answered) reject(new UsageError('No password on standard input (one line expected).'))
    })
    input.once('error', reject)
  })
}

function askHidden(io: CliIo, prompt: string): Promise<string> {
  let muted = false
  // The terminal echoes through this stream; once the prompt is out, nothing more is shown.
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stderr.write(chunk)
      done()
    },
  })
  const rl = createInterface({ input: io.stdin, output, terminal: true })
  return new Promise((resolve) => {
    rl.question(prompt, (answer) => {
      rl.close()
      process.stderr.write('\n')
      resolve(answer)
    })
    muted = true
  })
}
