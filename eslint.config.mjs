// `pnpm lint`'s linter: typescript-eslint's type-aware recommended rules over every TypeScript source of the
// workspace, plus a file-length limit. Generated code and frozen migrations are left as they were written.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      '.data/**',
      '**/generated/**',
      'services/*/src/db/migrations/**',
      'bench/results/**',
      '**/*.cjs',
      '**/*.js',
      '**/*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  // Layout is Prettier's: the rules it would fight (e.g. no-unexpected-multiline on chained calls) are off.
  prettier,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'max-lines': ['error', { max: 400 }],
      // An async function that awaits nothing is how an interface's promise-returning member is written when
      // this implementation happens to be synchronous; the rule would turn those into Promise.resolve noise.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Tests read HTTP answers (supertest's `body` is `any`) and poke at them; typing every answer in a test
    // would restate the spec a second time, so the "unsafe any" family is off there, and only there.
    files: ['**/test/**/*.ts', 'test/**/*.ts', 'bench/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
