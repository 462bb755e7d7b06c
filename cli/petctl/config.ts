/**
 * Where petctl connects and with which credentials: a flag wins over the environment, which wins
 * over the config file.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DEFAULT_BASE_URL, type PetServiceOptions } from '../../clients/typescript/src/index.ts'
import { UsageError } from './errors.ts'
import { integer } from './parse.ts'

/** The options every command takes (commander camel-cases them). */
export interface GlobalFlags {
  url?: string
  config?: string
  apiKey?: string
  clientId?: string
  clientSecret?: string
  scope?: string
  accessToken?: string
  json?: boolean
  timeout?: string
  maxRetries?: string
}

export type Env = Record<string, string | undefined>

export function clientOptions(flags: GlobalFlags, env: Env): PetServiceOptions {
  const file = readConfigFile(flags.config, env)
  const pick = (flag: string | undefined, name: string) => {
    const value = flag ?? env[name] ?? file[name]
    return value === undefined || value === '' ? undefined : value
  }
  const baseUrl = pick(flags.url, 'PET_SERVICE_URL') ?? DEFAULT_BASE_URL
  if (!/^https?:\/\/[^/]/.test(baseUrl))
    throw new UsageError(`The service URL must start with http:// or https://, not ${baseUrl}.`)
  const options: PetServiceOptions = { baseUrl }
  const apiKey = pick(flags.apiKey, 'PET_SERVICE_API_KEY')
  const clientId = pick(flags.clientId, 'PET_SERVICE_CLIENT_ID')
  const clientSecret = pick(flags.clientSecret, 'PET_SERVICE_CLIENT_SECRET')
  const accessToken = pick(flags.accessToken, 'PET_SERVICE_ACCESS_TOKEN')
  const scope = pick(flags.scope, 'PET_SERVICE_SCOPE')
  if (apiKey !== undefined) options.apiKey = apiKey
  if (accessToken !== undefined) options.accessToken = accessToken
  else if (clientId !== undefined || clientSecret !== undefined) {
    if (clientId === undefined || clientSecret === undefined)
      throw new UsageError('Give both --client-id and --client-secret (or their environment variables).')
    options.clientId = clientId
    options.clientSecret = clientSecret
  }
  if (scope !== undefined) options.scope = scope
  if (flags.timeout !== undefined) options.timeout = integer(flags.timeout, '--timeout', 1)
  if (flags.maxRetries !== undefined) options.maxRetries = integer(flags.maxRetries, '--max-retries', 0)
  return options
}

/** Refuses, before any request, a command whose credentials are missing or of the wrong kind. */
export function requireCredentials(
  options: PetServiceOptions,
  needs: 'key' | 'oauth',
  command: string,
): void {
  if (needs === 'key') {
    if (options.apiKey === undefined) {
      throw new UsageError(
        `${command} needs an API key: set PET_SERVICE_API_KEY or pass --api-key (pet-service keys create --account you@example.com, or the dashboard's API keys page, makes one).`,
      )
    }
    if (!options.apiKey.startsWith('pet_sk_')) {
      const what = options.apiKey.startsWith('eyJ')
        ? 'an OAuth access token (use it with --access-token, for token and --v2)'
        : options.apiKey.startsWith('pet_ci_')
          ? 'an OAuth client id (use it with --client-id)'
          : 'not an API key'
      throw new UsageError(`The API key given is ${what}; API keys start with pet_sk_.`)
    }
    return
  }
  if (options.accessToken === undefined && options.clientId === undefined) {
    throw new UsageError(
      `${command} needs OAuth credentials: PET_SERVICE_CLIENT_ID and PET_SERVICE_CLIENT_SECRET (pet-service clients create --account you@example.com, or the dashboard's OAuth apps page, makes them), or PET_SERVICE_ACCESS_TOKEN.`,
    )
  }
}

/**
 * The optional config file: JSON with the same names as the environment variables, e.g.
 * `{"PET_SERVICE_URL": "https://pets.example.com", "PET_SERVICE_API_KEY": "pet_sk_..."}`.
 * `--config PATH`, else PET_SERVICE_CONFIG, else ~/.config/petctl/config.json if it exists.
 * petctl keeps state of its own there too (listen-secret.ts), as objects, which are not options.
 */
function readConfigFile(flag: string | undefined, env: Env): Env {
  const file = configFile(flag, env)
  if (file === undefined || (!file.explicit && !existsSync(file.path))) return {}
  const out: Env = {}
  for (const [name, value] of Object.entries(readConfigObject(file.path)))
    if (typeof value === 'string') out[name] = value
  return out
}

/** Where the config file is (it may not exist yet), or undefined when there is no home to put it in. */
export function configFile(
  flag: string | undefined,
  env: Env,
): { path: string; explicit: boolean } | undefined {
  const explicit = flag ?? env.PET_SERVICE_CONFIG
  if (explicit !== undefined) return { path: explicit, explicit: true }
  const home = env.XDG_CONFIG_HOME ?? (env.HOME === undefined ? undefined : join(env.HOME, '.config'))
  return home === undefined ? undefined : { path: join(home, 'petctl', 'config.json'), explicit: false }
}

/** The config file's JSON object, every value as it is. */
export function readConfigObject(path: string): Record<string, unknown> {
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    throw new UsageError(
      `Cannot read the config file ${path}: ${error instanceof Error ? error.message : error}`,
    )
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new UsageError(`The config file ${path} must hold a JSON object.`)
  return parsed as Record<string, unknown>
}
