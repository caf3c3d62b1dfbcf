import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['__test__/**/*.test.ts'],
    setupFiles: ['__test__/support/setup.ts'],
    globalSetup: ['__test__/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each file gets its own worker; the addon is loaded once per worker.
    pool: 'forks',
  },
})
