// `npm run lint`: standard's style (neostandard), which the code already follows.
import neostandard from 'neostandard'

export default [
  ...neostandard({
    ignores: ['vendor/**', 'proto/generated.js', 'web/hdr-histogram-js.js', 'compare-report/**', 'results/**']
  }),
  {
    // Long lines hide what a line does; strings, templates and JSDoc types may run on.
    files: ['lib/**/*.js'],
    rules: {
      '@stylistic/max-len': ['error', {
        code: 120,
        ignoreUrls: true,
        ignoreStrings: true,
        ignoreTemplateLiterals: true,
        ignoreRegExpLiterals: true,
        ignorePattern: '^\\s*\\* @(param|returns|property|typedef|throws)'
      }]
    }
  },
  {
    files: ['web/**/*.js'],
    languageOptions: { globals: { window: 'readonly', document: 'readonly', location: 'readonly', performance: 'readonly', WebSocket: 'readonly', fetch: 'readonly', TextEncoder: 'readonly' } }
  }
]
