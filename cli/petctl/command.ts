/**
 * What every command module builds on: where petctl prints (`Io`), what an action gets (`Run`),
 * and the two builders that give each command its description and, in its help, an example.
 */
import type { Command } from 'commander'
import {
  type PetService,
  PetService as PetServiceClient,
  type PetServiceOptions,
  type RequestOptions,
} from '../../clients/typescript/src/index.ts'
import { clientOptions, type Env, type GlobalFlags, requireCredentials } from './config.ts'

export interface Io {
  out(text: string): void
  err(text: string): void
  env: Env
  /** True when stderr is a terminal: --all shows its progress there. */
  progress: boolean
  /** Injected in tests; defaults to a client built from the flags and environment. */
  client?: (options: PetServiceOptions) => PetService
  /** Stops `petctl listen`; defaults to Ctrl-C (SIGINT) or SIGTERM. */
  signal?: AbortSignal
}

/** What an action needs: its flags, a client, and where to print. */
export interface Run<F> {
  /** The command's flags, and the global ones (`--json`, `--config`, …). */
  flags: GlobalFlags & F
  io: Io
  json: boolean
  /** `--idempotency-key` and `--if-match`, for the commands that have them. */
  options: RequestOptions
  /** The service and credentials the flags, environment and config file name. */
  service: PetServiceOptions
  /** The client, once the credentials that `needs` names are known to be there. */
  client(needs: 'key' | 'oauth'): PetService
}

/** Runs a command, given its positional arguments after `run`. */
export type Action<F> = (run: Run<F>, ...args: string[]) => Promise<void>

/** At least one: `petctl … --help` shows them under the options. */
export type Examples = readonly [string, ...string[]]

/** Registers a command module's commands on the program. */
export type Register = (program: Command, io: Io) => void

/** A command that holds others (`petctl pets`); add them to what this returns. */
export function group(parent: Command, name: string, description: string, examples: Examples): Command {
  return withExamples(parent.command(name).description(description), examples)
}

/** A command that runs an action; chain its arguments and options on what this returns. */
export function leaf<F extends object>(
  parent: Command,
  io: Io,
  name: string,
  spec: { description: string; examples: Examples; action: Action<F> },
): Command {
  const command = parent.command(name).description(spec.description)
  return withExamples(command, spec.examples).action(async (...args: unknown[]) => {
    // Commander passes the positional arguments, then the options, then the command itself.
    const self = args.at(-1) as Command
    const positionals = args.slice(0, -2) as string[]
    await spec.action(context<F>(self, io), ...positionals)
  })
}

function withExamples(command: Command, examples: Examples): Command {
  const heading = examples.length === 1 ? 'Example' : 'Examples'
  return command.addHelpText('after', `\n${heading}:\n${examples.map((e) => `  ${e}`).join('\n')}`)
}

interface RequestFlags {
  idempotencyKey?: string
  ifMatch?: string
}

function context<F extends object>(command: Command, io: Io): Run<F> {
  const flags = command.optsWithGlobals<GlobalFlags & RequestFlags & F>()
  const options = clientOptions(flags, io.env)
  const requestOptions: RequestOptions = {}
  if (flags.idempotencyKey !== undefined) requestOptions.idempotencyKey = flags.idempotencyKey
  if (flags.ifMatch !== undefined) requestOptions.ifMatch = flags.ifMatch
  const parent = command.parent
  const name = `petctl ${parent === null || parent.parent === null ? '' : `${parent.name()} `}${command.name()}`
  return {
    flags,
    io,
    json: flags.json === true,
    options: requestOptions,
    service: options,
    client(needs) {
      requireCredentials(options, needs, name)
      return (io.client ?? ((o) => new PetServiceClient(o)))(options)
    },
  }
}

/**
 * Runs `follow` (a command that goes on until stopped: listen) until Ctrl-C (SIGINT) or SIGTERM,
 * or `io.signal` in tests; stopping ends it normally, so petctl exits 0, not mid-write.
 */
export async function untilInterrupted(
  io: Io,
  follow: (signal: AbortSignal) => Promise<void>,
): Promise<void> {
  if (io.signal !== undefined) return follow(io.signal)
  const stop = new AbortController()
  const onSignal = () => stop.abort()
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  try {
    await follow(stop.signal)
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}
