import { describe, expect, it } from 'vitest'
import { ConfigError, checkServeConfig, loadConfig } from '../../src/config/config.ts'
import { runPetService } from '../helpers/cli.ts'

/**
 * Instances on one PostgreSQL database must name one OAuth issuer, or a token issued by one is
 * refused by the others: without PUBLIC_URL each would call itself http://localhost:PORT.
 */
describe('PUBLIC_URL on PostgreSQL', () => {
  // Nothing listens here: the check comes before any connection.
  const postgres = 'postgres://nobody@127.0.0.1:1/none'

  it('is required to serve on PostgreSQL, with a message that says why', () => {
    let error: unknown
    try {
      checkServeConfig(loadConfig({ DATABASE_URL: postgres }))
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    const message = (error as ConfigError).message
    expect(message).toContain('PUBLIC_URL')
    expect(message).toMatch(/several instances/i)
    expect(message).toMatch(/issuer/i)
  })

  it('is optional on SQLite, and enough on PostgreSQL once set', () => {
    expect(() => checkServeConfig(loadConfig({ DATABASE_URL: 'sqlite:./x.db' }))).not.toThrow()
    expect(() =>
      checkServeConfig(loadConfig({ DATABASE_URL: postgres, PUBLIC_URL: 'https://pets.example.com' })),
    ).not.toThrow()
  })

  it('makes `pet-service serve` on PostgreSQL without it exit 2 at once, saying so', async () => {
    const res = await runPetService(['serve'], { DATABASE_URL: postgres, PUBLIC_URL: '' })
    expect(res.code).toBe(2)
    expect(res.stderr).toContain('PUBLIC_URL')
    expect(res.stderr).not.toMatch(/ECONNREFUSED|\n\s+at /)
  })
})
