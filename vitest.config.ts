import { defineConfig } from 'vitest/config'

/**
 * Every test file runs twice: once on SQLite and once on PostgreSQL (TEST_DB picks the
 * dialect inside the helpers). Without a PostgreSQL server the second project skips, loudly;
 * with REQUIRE_POSTGRES=1 (CI) it fails instead. `*.sqlite.test.ts` files run on SQLite only,
 * `*.postgres.test.ts` files (several instances on one database) on PostgreSQL only.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.postgres.test.ts'],
          env: { TEST_DB: 'sqlite' },
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.sqlite.test.ts'],
          env: { TEST_DB: 'postgres' },
          globalSetup: ['test/setup/postgres-global.ts'],
        },
      },
    ],
  },
})
