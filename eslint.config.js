import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['**/dist/**', '.tsbuild/**', 'bench/results/**', 'data/**'] })
]
