// The same suite, over a real SQLite file instead of the in-memory adapters.
process.env.PEOPLE_TEST_DATABASE = 'sqlite'
await import('../unicode.test.js')
