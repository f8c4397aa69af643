import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['**/dist/**', 'packages/client/src/generated/**', '.tsbuild/**', 'bench/results/**', 'data/**'] })
]
