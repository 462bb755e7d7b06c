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
  const [first, again] = await askHidden(io, [prompt, 'Repeat it: '])
  if (first !== again) throw new UsageError('The two passwords differ; nothing changed.')
  return first ?? ''
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

/** One terminal session for every question, so that lines typed ahead are not lost. */
async function askHidden(io: CliIo, prompts: string[]): Promise<string[]> {
  let muted = false
  // The terminal echoes through this stream; once a prompt is out, nothing more is shown.
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stderr.write(chunk)
      done()
    },
  })
  const rl = createInterface({ input: io.stdin, output, terminal: true })
  const answers: string[] = []
  try {
    for (const prompt of prompts) {
      muted = false
      const answer = new Promise<string>((resolve) => rl.question(prompt, resolve))
      muted = true
      answers.push(await answer)
      process.stderr.write('\n')
    }
  } finally {
    rl.close()
  }
  return answers
}
