import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { CONFIG_OPTIONS, ConfigError, loadConfig, sqlitePath } from '../../src/config/config.ts'

describe('configuration', () => {
  it('has working defaults: port 8080, SQLite under ./data, rate limit 100/s burst 200', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      port: 8080,
      databaseUrl: 'sqlite:./data/pet-service.db',
      rateLimitRps: 100,
      rateLimitBurst: 200,
      logLevel: 'info',
    })
    expect(sqlitePath(config.databaseUrl, '/srv/app')).toBe('/srv/app/data/pet-service.db')
    expect(sqlitePath('sqlite:/var/lib/pets.db', '/srv/app')).toBe('/var/lib/pets.db')
  })

  it('names every bad value with what it must be, all at once', () => {
    let error: unknown
    try {
      loadConfig({
        PORT: '70000',
        RATE_LIMIT_RPS: '-1',
        TRUST_PROXY: 'maybe',
        DATABASE_URL: 'mysql://x',
        KEY_CACHE_SECONDS: '60',
      })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    const problems = (error as ConfigError).problems.join('\n')
    for (const name of ['PORT', 'RATE_LIMIT_RPS', 'TRUST_PROXY', 'DATABASE_URL', 'KEY_CACHE_SECONDS']) {
      expect(problems).toContain(name)
    }
    expect((error as ConfigError).problems).toHaveLength(5)
  })

  it('is documented: every option appears in the README table and in .env.example', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
    const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8')
    for (const option of CONFIG_OPTIONS) {
      expect(readme, option.env).toContain(`| \`${option.env}\` |`)
      expect(example, option.env).toMatch(new RegExp(`^#? ?${option.env}=`, 'm'))
    }
  })
})
