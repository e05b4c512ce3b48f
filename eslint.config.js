// `npm run lint`: standard's style (neostandard), which the code already follows.
import neostandard from 'neostandard'

export default [
  ...neostandard({
    ignores: ['vendor/**', 'proto/generated.js', 'web/hdr-histogram-js.js', 'compare-report/**', 'results/**']
  }),
  {
    files: ['web/**/*.js'],
    languageOptions: { globals: { window: 'readonly', document: 'readonly', location: 'readonly', performance: 'readonly', WebSocket: 'readonly', fetch: 'readonly', TextEncoder: 'readonly' } }
  }
]
