// The same suite, over a real PostgreSQL database instead of the in-memory adapters.
process.env.PEOPLE_TEST_DATABASE = 'postgres'
await import('../api-key-bounds.test.js')
