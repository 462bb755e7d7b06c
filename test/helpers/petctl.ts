import { type Io, run } from '../../cli/petctl/main.ts'

/**
 * Runs petctl in this process, capturing what it prints as its process entry (main.ts) prints
 * it: a line per call, but a progress count (`\r…`) in place. `progress`: whether stderr is a
 * terminal.
 */
export async function petctl(argv: string[], env: Record<string, string>, progress = false) {
  let stdout = ''
  let stderr = ''
  const io: Io = {
    out: (text) => {
      stdout += `${text}\n`
    },
    err: (text) => {
      stderr += text.startsWith('\r') ? text : `${text}\n`
    },
    env,
    progress,
  }
  const code = await run(argv, io)
  return { code, stdout, stderr }
}
