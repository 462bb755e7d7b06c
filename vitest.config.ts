import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'

/**
 * Every test file runs twice: once on SQLite and once on PostgreSQL (TEST_DB picks the
 * dialect inside the helpers). Without a PostgreSQL server the second project skips, loudly;
 * with REQUIRE_POSTGRES=1 (CI) it fails instead. `*.sqlite.test.ts` files run on SQLite only,
 * `*.postgres.test.ts` files (several instances on one database) on PostgreSQL only.
 */
export default defineConfig({
  test: {
    // At least three test files at a time, even on two cores: most of them wait on child
    // processes, sockets and databases rather than compute, so vitest's default (one worker on
    // two cores) leaves the machine idle most of the time.
    maxWorkers: Math.max(3, availableParallelism()),
    // Test files share a worker's module cache instead of each loading the app's ~800 modules
    // afresh, which costs CPU the suite is short of on a 2-core machine. Tests therefore leave no
    // global state behind (each builds its own app, database and registries, and restores what
    // it changes).
    isolate: false,
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
