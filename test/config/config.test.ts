import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { renderConfigDocs, renderEnvExample } from '../../scripts/write-config-docs.ts'
import { CONFIG_OPTIONS, ConfigError, loadConfig, sqlitePath } from '../../src/config/config.ts'
import { runPetService } from '../helpers/cli.ts'

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

  it('takes CORS_ORIGINS as exact origins, none by default, and refuses * and anything with a path', () => {
    expect(loadConfig({}).corsOrigins).toEqual([])
    expect(
      loadConfig({ CORS_ORIGINS: ' https://app.example.com, http://localhost:5173,https://app.example.com' })
        .corsOrigins,
    ).toEqual(['https://app.example.com', 'http://localhost:5173'])
    const cases: [string, RegExp][] = [
      ['*', /may not contain \*/],
      ['null', /may not contain null/],
      ['https://app.example.com/', /exactly as browsers send it.*https:\/\/app\.example\.com\.$/],
      ['https://app.example.com/callback', /without a path/],
      ['https://App.Example.com', /https:\/\/app\.example\.com\.$/],
      ['https://app.example.com:443', /default port: https:\/\/app\.example\.com\.$/],
      ['app.example.com', /http or https origin/],
      ['ftp://files.example.com', /http or https origin/],
    ]
    for (const [bad, message] of cases) {
      let problems: string[] = []
      try {
        loadConfig({ CORS_ORIGINS: `https://ok.example.com,${bad}` })
      } catch (error) {
        problems = (error as ConfigError).problems
      }
      expect(problems, bad).toHaveLength(1)
      expect(problems[0], bad).toMatch(/^CORS_ORIGINS/)
      expect(problems[0], bad).toMatch(message)
    }
  })

  it('takes TRUST_PROXY as a number of proxies or their addresses, and refuses true saying what to give instead', () => {
    expect(loadConfig({}).trustProxy).toBe(false)
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false)
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2)
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1,fd00::/8,loopback' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      '::1',
      'fd00::/8',
      'loopback',
    ])
    for (const bad of ['true', 'yes', '10.0.0.0/33', 'proxy.example.com', '10.0.0.1,', '21']) {
      let problems: string[] = []
      try {
        loadConfig({ TRUST_PROXY: bad })
      } catch (error) {
        problems = (error as ConfigError).problems
      }
      expect(problems, bad).toHaveLength(1)
      expect(problems[0], bad).toMatch(/TRUST_PROXY.*number of proxies.*10\.0\.0\.0\/8/)
    }
  })

  /** The 96 ranges that cover every IPv6 address except ::ffff:0:0/96: at each bit, the other branch. */
  function allButIpv4Mapped(): string {
    const mapped = 0xffffn << 32n
    return Array.from({ length: 96 }, (_, bit) => {
      const flipped = ((mapped ^ (1n << BigInt(127 - bit))) >> BigInt(127 - bit)) << BigInt(127 - bit)
      const parts = Array.from({ length: 8 }, (_, i) =>
        Number((flipped >> BigInt(112 - 16 * i)) & 0xffffn).toString(16),
      )
      return `${parts.join(':')}/${bit + 1}`
    }).join(',')
  }

  it('refuses TRUST_PROXY ranges that together trust every address of a family, naming the family', () => {
    const everyIpv4 = Array.from({ length: 256 }, (_, i) => `${i}.0.0.0/8`).join(',')
    for (const [whole, family] of [
      ['0.0.0.0/0', 4],
      ['0.0.0.0/1,128.0.0.0/1', 4],
      ['0.0.0.0/1, 128.0.0.0/2, 192.0.0.0/3, 224.0.0.0/3, loopback', 4],
      [everyIpv4, 4],
      ['::ffff:0:0/96', 4],
      ['::ffff:0.0.0.0/97,::ffff:128.0.0.0/97', 4],
      ['0.0.0.0/1,::ffff:128.0.0.0/97', 4],
      ['::/0', 6],
      ['::/1,8000::/1', 6],
      // Every IPv6 address but the IPv4-mapped ones, which are judged as IPv4.
      [allButIpv4Mapped(), 6],
    ] as const) {
      let problems: string[] = []
      try {
        loadConfig({ TRUST_PROXY: whole })
      } catch (error) {
        problems = (error as ConfigError).problems
      }
      expect(problems, whole).toHaveLength(1)
      expect(problems[0], whole).toContain(`trusts every IPv${family} address`)
      expect(problems[0], whole).toMatch(/X-Forwarded-For.*TRUST_PROXY=1/)
    }
    for (const partial of [
      '0.0.0.0/1',
      '0.0.0.0/1,128.0.0.0/2',
      '::/1',
      '::ffff:0:0/97',
      'loopback,linklocal,uniquelocal',
    ]) {
      expect(loadConfig({ TRUST_PROXY: partial }).trustProxy, partial).not.toBe(false)
    }
  })

  it('makes `pet-service serve` with a TRUST_PROXY that trusts everyone exit 2 at start, saying so', async () => {
    const res = await runPetService(['serve'], {
      TRUST_PROXY: '0.0.0.0/1,128.0.0.0/1',
      PORT: '0',
      DATABASE_URL: 'sqlite::memory:',
    })
    expect(res.code).toBe(2)
    expect(res.stderr).toContain('TRUST_PROXY=0.0.0.0/1,128.0.0.0/1 trusts every IPv4 address')
  })

  it('has a bound for every wait, in seconds (decimals allowed), and refuses bounds that cannot work', () => {
    expect(loadConfig({})).toMatchObject({
      httpHeadersTimeoutSeconds: 10,
      httpRequestTimeoutSeconds: 30,
      httpKeepAliveTimeoutSeconds: 72,
      dbPoolSize: 10,
      dbBackgroundPoolSize: 2,
      dbConnectTimeoutSeconds: 5,
      dbStatementTimeoutSeconds: 10,
      dbLockTimeoutSeconds: 5,
      readyTimeoutSeconds: 2,
      redisTimeoutSeconds: 0.5,
      shutdownDrainSeconds: 5,
      shutdownGraceSeconds: 10,
    })
    expect(loadConfig({ DB_LOCK_TIMEOUT_SECONDS: '0.25' }).dbLockTimeoutSeconds).toBe(0.25)
    expect(loadConfig({ DB_POOL_SIZE: '25' }).dbPoolSize).toBe(25)
    expect(() => loadConfig({ DB_POOL_SIZE: '0' })).toThrow(/DB_POOL_SIZE/)
    expect(loadConfig({ DB_BACKGROUND_POOL_SIZE: '4' }).dbBackgroundPoolSize).toBe(4)
    expect(() => loadConfig({ DB_BACKGROUND_POOL_SIZE: '0' })).toThrow(/DB_BACKGROUND_POOL_SIZE/)
    let problems: string[] = []
    try {
      loadConfig({
        DB_STATEMENT_TIMEOUT_SECONDS: '-1',
        READY_TIMEOUT_SECONDS: 'soon',
        HTTP_HEADERS_TIMEOUT_SECONDS: '60',
        HTTP_REQUEST_TIMEOUT_SECONDS: '30',
      })
    } catch (error) {
      problems = (error as ConfigError).problems
    }
    expect(problems).toHaveLength(3)
    expect(problems.join('\n')).toMatch(
      /DB_STATEMENT_TIMEOUT_SECONDS.*READY_TIMEOUT_SECONDS.*HTTP_HEADERS_TIMEOUT_SECONDS/s,
    )
  })

  it('is documented: docs/configuration.md is generated from the options and up to date, and .env.example lists every option', () => {
    const page = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8')
    expect(page).toBe(renderConfigDocs())
    const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8')
    for (const option of CONFIG_OPTIONS) {
      expect(page, option.env).toContain(`| \`${option.env}\` |`)
      expect(example, option.env).toMatch(new RegExp(`^#? ?${option.env}=`, 'm'))
    }
    expect(example).toBe(renderEnvExample())
  })

  it('runs one worker by default; WORKERS takes a number from 1 to 1024 or auto', () => {
    expect(loadConfig({}).workers).toBe(1)
    expect(loadConfig({ WORKERS: '4' }).workers).toBe(4)
    expect(loadConfig({ WORKERS: ' Auto ' }).workers).toBe('auto')
    for (const bad of ['0', '1.5', 'two', '2000', '-1']) {
      expect(() => loadConfig({ WORKERS: bad }), bad).toThrow(
        /WORKERS=".*" must be a whole number from 1 to 1024, or auto/,
      )
    }
  })

  it('serves metrics on 127.0.0.1:9464 by default, and METRICS_PORT=0 turns them off', () => {
    expect(loadConfig({})).toMatchObject({ metricsPort: 9464, metricsHost: '127.0.0.1' })
    expect(loadConfig({ METRICS_PORT: '0' }).metricsPort).toBe(0)
    expect(() => loadConfig({ METRICS_PORT: 'x' })).toThrow(/METRICS_PORT="x" must be a whole number/)
  })

  it('traces only when the OTEL_* variables name an exporter or an endpoint, unless the SDK is disabled', () => {
    const tracing = (env: Record<string, string>) => loadConfig(env).tracing
    expect(tracing({})).toEqual({ enabled: false, serviceName: 'pet-service' })
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).enabled).toBe(true)
    expect(tracing({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).enabled).toBe(
      true,
    )
    expect(tracing({ OTEL_TRACES_EXPORTER: 'console' }).enabled).toBe(true)
    expect(
      tracing({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }).enabled,
    ).toBe(false)
    expect(tracing({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }).enabled).toBe(
      false,
    )
    expect(tracing({ OTEL_SERVICE_NAME: 'pets-eu' }).serviceName).toBe('pets-eu')
  })

  it('writes spans to TRACES_FILE when set, and traces the share TRACES_BACKGROUND_RATIO (0 to 1) of background work', () => {
    const tracing = (env: Record<string, string>) => loadConfig(env).tracing
    expect(tracing({ TRACES_FILE: 'traces.jsonl' })).toMatchObject({ enabled: true, file: 'traces.jsonl' })
    expect(tracing({ TRACES_FILE: 'traces.jsonl', OTEL_SDK_DISABLED: 'true' }).enabled).toBe(false)
    expect(tracing({}).backgroundRatio).toBeUndefined()
    expect(tracing({ TRACES_BACKGROUND_RATIO: '0.01' }).backgroundRatio).toBe(0.01)
    expect(tracing({ TRACES_BACKGROUND_RATIO: '1' }).backgroundRatio).toBe(1)
    for (const bad of ['2', '-0.1', 'half', '1.5']) {
      expect(() => loadConfig({ TRACES_BACKGROUND_RATIO: bad }), bad).toThrow(
        /TRACES_BACKGROUND_RATIO.*from 0 to 1/,
      )
    }
  })

  it("takes DB_POOLER as PgBouncer's pool mode, with named statements off by default behind a transaction pooler", () => {
    expect(loadConfig({})).toMatchObject({ dbPooler: 'none', dbPreparedStatements: true })
    expect(loadConfig({ DB_POOLER: 'session' })).toMatchObject({
      dbPooler: 'session',
      dbPreparedStatements: true,
    })
    expect(loadConfig({ DB_POOLER: 'Transaction' })).toMatchObject({
      dbPooler: 'transaction',
      dbPreparedStatements: false,
    })
    expect(
      loadConfig({ DB_POOLER: 'transaction', DB_PREPARED_STATEMENTS: 'true' }).dbPreparedStatements,
    ).toBe(true)
    expect(loadConfig({ DB_PREPARED_STATEMENTS: 'false' }).dbPreparedStatements).toBe(false)
    expect(() => loadConfig({ DB_POOLER: 'statement' })).toThrow(
      /DB_POOLER="statement" must be one of none, session, transaction/,
    )
    expect(() => loadConfig({ DB_PREPARED_STATEMENTS: 'yes' })).toThrow(
      /DB_PREPARED_STATEMENTS="yes" must be true or false/,
    )
  })

  it('names every bad OTEL_* value with what it must be', () => {
    let error: unknown
    try {
      loadConfig({
        OTEL_SDK_DISABLED: 'yes',
        OTEL_TRACES_EXPORTER: 'jaeger',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318',
      })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    const problems = (error as ConfigError).problems
    expect(problems).toHaveLength(4)
    expect(problems.join('\n')).toMatch(/OTEL_SDK_DISABLED="yes" must be true or false/)
    expect(problems.join('\n')).toMatch(
      /OTEL_TRACES_EXPORTER="jaeger" must be one of otlp, console, zipkin, none/,
    )
    expect(problems.join('\n')).toMatch(
      /OTEL_EXPORTER_OTLP_PROTOCOL="http" must be one of grpc, http\/protobuf/,
    )
    expect(problems.join('\n')).toMatch(
      /OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318" must be an http\(s\) URL/,
    )
  })
})
