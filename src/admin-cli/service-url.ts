import type { Config } from '../config/config.ts'

/** Hosts that mean "every interface": a client reaches such a service on localhost. */
const WILDCARD_HOSTS = new Set(['', '0.0.0.0', '::', '[::]'])

/**
 * Where clients reach the service, for the hints the commands print: PUBLIC_URL's origin (the
 * OAuth issuer, src/oauth/oauth-server.ts), else the configured HOST and PORT.
 */
export function serviceUrl(config: Pick<Config, 'publicUrl' | 'host' | 'port'>): string {
  if (config.publicUrl !== undefined) return new URL(config.publicUrl).origin
  const host = WILDCARD_HOSTS.has(config.host)
    ? 'localhost'
    : config.host.includes(':') && !config.host.startsWith('[')
      ? `[${config.host}]`
      : config.host
  return `http://${host}:${config.port}`
}
